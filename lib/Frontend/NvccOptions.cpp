#include "NvccOptions.h"

#include <algorithm>

namespace ptb {

namespace {

constexpr ForClang Keep = ForClang::Keep, Drop = ForClang::Drop, DropWithValue = ForClang::DropWithValue;

// The options that take a value are `nvcc --help`'s shown with <...>, {...} or [...], plus -MF,
// -qpp-config, -e/--entries (shown as `entry,...`) and the undocumented -Xcudafe/-Xfatbin. The front end drops
// those clang has no use for (nvcc's own: -Ofc, -jtd, --fatbin-options, -frandom-seed with its value apart), and
// the flags without a value that clang does not take (or that would stop a syntax-only parse: -M, -E).
const NvccOption kOptions[] = {
    {"--output-file", true, Keep}, {"-o", true, Keep}, {"--pre-include", true, Keep}, {"-include", true, Keep},
    {"--library", true, DropWithValue}, {"-l", true, Keep}, {"--define-macro", true, Keep}, {"-D", true, Keep},
    {"--undefine-macro", true, Keep}, {"-U", true, Keep}, {"--include-path", true, Keep}, {"-I", true, Keep},
    {"--system-include", true, Keep}, {"-isystem", true, Keep}, {"--library-path", true, DropWithValue},
    {"-L", true, Keep}, {"--output-directory", true, DropWithValue}, {"-odir", true, DropWithValue},
    {"--compiler-bindir", true, DropWithValue}, {"-ccbin", true, DropWithValue},
    {"--archiver-binary", true, DropWithValue}, {"-arbin", true, DropWithValue}, {"--cudart", true, DropWithValue},
    {"-cudart", true, DropWithValue}, {"--cudadevrt", true, DropWithValue}, {"-cudadevrt", true, DropWithValue},
    {"--libdevice-directory", true, DropWithValue}, {"-ldir", true, DropWithValue},
    {"--target-directory", true, DropWithValue}, {"-target-dir", true, DropWithValue},
    {"--optimization-info", true, DropWithValue}, {"-opt-info", true, DropWithValue},
    {"--optimize", true, DropWithValue}, {"-O", true, Keep}, {"--Ofast-compile", true, DropWithValue}, {"-Ofc", true, DropWithValue},
    {"--dopt", true, DropWithValue}, {"-dopt", true, DropWithValue}, {"--ftemplate-backtrace-limit", true, Keep},
    {"-ftemplate-backtrace-limit", true, Keep}, {"--ftemplate-depth", true, Keep}, {"-ftemplate-depth", true, Keep},
    {"--x", true, Keep}, {"-x", true, Keep}, {"--std", true, Keep}, {"-std", true, Keep},
    {"--machine", true, DropWithValue}, {"-m", true, Keep}, {"--compiler-options", true, Keep},
    {"-Xcompiler", true, Keep}, {"--linker-options", true, DropWithValue}, {"-Xlinker", true, Keep},
    {"--archive-options", true, DropWithValue}, {"-Xarchive", true, DropWithValue},
    {"--ptxas-options", true, DropWithValue}, {"-Xptxas", true, DropWithValue},
    {"--nvlink-options", true, DropWithValue}, {"-Xnvlink", true, DropWithValue}, {"-Xcudafe", true, DropWithValue},
    {"--cudafe-options", true, DropWithValue}, {"-Xfatbin", true, DropWithValue}, {"--fatbin-options", true, DropWithValue},
    {"--static-global-template-stub", true, DropWithValue}, {"-static-global-template-stub", true, DropWithValue},
    {"--device-entity-has-hidden-visibility", true, DropWithValue},
    {"-device-entity-has-hidden-visibility", true, DropWithValue}, {"--threads", true, DropWithValue},
    {"-t", true, DropWithValue}, {"--split-compile", true, DropWithValue}, {"-split-compile", true, DropWithValue},
    {"--split-compile-extended", true, DropWithValue}, {"-split-compile-extended", true, DropWithValue},
    {"--fdevice-time-trace", true, DropWithValue}, {"-fdevice-time-trace", true, DropWithValue},
    {"--keep-dir", true, DropWithValue}, {"-keep-dir", true, DropWithValue}, {"--time", true, DropWithValue},
    {"-time", true, DropWithValue}, {"--run-args", true, DropWithValue}, {"-run-args", true, DropWithValue},
    {"--input-drive-prefix", true, DropWithValue}, {"-idp", true, DropWithValue},
    {"--dependency-drive-prefix", true, DropWithValue}, {"-ddp", true, DropWithValue},
    {"--drive-prefix", true, DropWithValue}, {"-dp", true, DropWithValue},
    {"--dependency-target-name", true, DropWithValue}, {"-MT", true, Keep},
    {"--dependency-output", true, DropWithValue}, {"-MF", true, Keep}, {"--gpu-architecture", true, DropWithValue},
    {"-arch", true, DropWithValue}, {"--gpu-code", true, DropWithValue}, {"-code", true, DropWithValue},
    {"--generate-code", true, DropWithValue}, {"-gencode", true, DropWithValue},
    {"--relocatable-device-code", true, DropWithValue}, {"-rdc", true, DropWithValue},
    {"--maxrregcount", true, DropWithValue}, {"-maxrregcount", true, DropWithValue}, {"--ftz", true, DropWithValue},
    {"-ftz", true, DropWithValue}, {"--prec-div", true, DropWithValue}, {"-prec-div", true, DropWithValue},
    {"--prec-sqrt", true, DropWithValue}, {"-prec-sqrt", true, DropWithValue}, {"--fmad", true, DropWithValue},
    {"-fmad", true, DropWithValue}, {"--default-stream", true, DropWithValue},
    {"-default-stream", true, DropWithValue}, {"--Werror", true, DropWithValue}, {"-Werror", true, Keep},
    {"--diag-error", true, DropWithValue}, {"-diag-error", true, DropWithValue},
    {"--diag-suppress", true, DropWithValue}, {"-diag-suppress", true, DropWithValue},
    {"--diag-warn", true, DropWithValue}, {"-diag-warn", true, DropWithValue},
    {"--host-linker-script", true, DropWithValue}, {"-hls", true, DropWithValue},
    {"--brief-diagnostics", true, DropWithValue}, {"-brief-diag", true, DropWithValue},
    {"--jump-table-density", true, DropWithValue}, {"-jtd", true, DropWithValue},
    {"--device-stack-protector", true, DropWithValue}, {"-device-stack-protector", true, DropWithValue},
    {"--compress-mode", true, DropWithValue}, {"-compress-mode", true, DropWithValue},
    {"--frandom-seed", true, DropWithValue}, {"-frandom-seed", true, DropWithValue}, {"--sanitize", true, DropWithValue},
    {"-sanitize", true, DropWithValue}, {"--options-file", true, DropWithValue}, {"-optf", true, DropWithValue},
    {"--qpp-config", true, DropWithValue}, {"-qpp-config", true, DropWithValue}, {"-lineinfo-level", true, DropWithValue},
    {"-e", true, DropWithValue}, {"--entries", true, DropWithValue}, {"-jump-table-density", true, DropWithValue},
    {"-lto-cache-dir", true, DropWithValue}, {"-lineinfo", false, Drop}, {"--generate-line-info", false, Drop},
    {"--use_fast_math", false, Drop}, {"-use_fast_math", false, Drop}, {"-G", false, Drop},
    {"--device-debug", false, Drop}, {"--extended-lambda", false, Drop}, {"-extended-lambda", false, Drop},
    {"--expt-extended-lambda", false, Drop}, {"--expt-relaxed-constexpr", false, Drop},
    {"-expt-relaxed-constexpr", false, Drop}, {"-expt-extended-lambda", false, Drop},
    {"--forward-unknown-to-host-compiler", false, Drop}, {"-forward-unknown-to-host-compiler", false, Drop},
    {"--forward-unknown-to-host-linker", false, Drop}, {"-forward-unknown-to-host-linker", false, Drop},
    {"--forward-unknown-opts", false, Drop}, {"-forward-unknown-opts", false, Drop}, {"-dc", false, Drop},
    {"--device-c", false, Drop}, {"-dw", false, Drop}, {"--device-w", false, Drop}, {"--keep", false, Drop},
    {"-keep", false, Drop}, {"-res-usage", false, Drop}, {"--resource-usage", false, Drop},
    {"--display-error-number", false, Drop}, {"-err-no", false, Drop}, {"--no-display-error-number", false, Drop},
    {"-no-err-no", false, Drop}, {"-Wno-deprecated-gpu-targets", false, Drop},
    {"--Wno-deprecated-gpu-targets", false, Drop}, {"-src-in-ptx", false, Drop}, {"--source-in-ptx", false, Drop},
    {"-cubin", false, Drop}, {"--cubin", false, Drop}, {"-ptx", false, Drop}, {"--ptx", false, Drop},
    {"-fatbin", false, Drop}, {"--fatbin", false, Drop}, {"-cuda", false, Drop}, {"--cuda", false, Drop},
    {"-optix-ir", false, Drop}, {"--optix-ir", false, Drop}, {"-ltoir", false, Drop}, {"--ltoir", false, Drop},
    {"-keep-device-functions", false, Drop}, {"--keep-device-functions", false, Drop},
    {"-extra-device-vectorization", false, Drop}, {"--extra-device-vectorization", false, Drop},
    {"-restrict", false, Drop}, {"--restrict", false, Drop}, {"-ewp", false, Drop},
    {"--extensible-whole-program", false, Drop}, {"-no-compress", false, Drop}, {"--no-compress", false, Drop},
    {"-astoolspatch", false, Drop}, {"--compile-as-tools-patch", false, Drop}, {"-code-ls", false, Drop},
    {"--list-gpu-code", false, Drop}, {"-arch-ls", false, Drop}, {"--list-gpu-arch", false, Drop},
    {"-aug-hls", false, Drop}, {"--augment-host-linker-script", false, Drop}, {"-reloc-ptx", false, Drop},
    {"--relocatable-ptx", false, Drop}, {"-jobserver", false, Drop}, {"--jobserver", false, Drop},
    {"-objtemp", false, Drop}, {"--objdir-as-tempdir", false, Drop}, {"-allow-unsupported-compiler", false, Drop},
    {"--allow-unsupported-compiler", false, Drop}, {"-use-local-env", false, Drop}, {"--use-local-env", false, Drop},
    {"-force-cl-env-setup", false, Drop}, {"--force-cl-env-setup", false, Drop}, {"-dlto", false, Drop},
    {"--dlink-time-opt", false, Drop}, {"-lto", false, Drop}, {"--lto", false, Drop}, {"-gen-opt-lto", false, Drop},
    {"--gen-opt-lto", false, Drop}, {"-nohdinitlist", false, Drop},
    {"--no-host-device-initializer-list", false, Drop}, {"-nohdmoveforward", false, Drop},
    {"--no-host-device-move-forward", false, Drop}, {"-dlink", false, Drop}, {"--device-link", false, Drop},
    {"-link", false, Drop}, {"--link", false, Drop}, {"-lib", false, Drop}, {"--lib", false, Drop},
    {"-run", false, Drop}, {"--run", false, Drop}, {"-noprof", false, Drop}, {"--dont-use-profile", false, Drop},
    {"-dryrun", false, Drop}, {"--dryrun", false, Drop}, {"-fdevice-syntax-only", false, Drop},
    {"--fdevice-syntax-only", false, Drop}, {"-save-temps", false, Drop}, {"--save-temps", false, Drop},
    {"-clean", false, Drop}, {"--clean-targets", false, Drop}, {"--no-align-double", false, Drop},
    {"-nodlink", false, Drop}, {"--no-device-link", false, Drop}, {"-noeh", false, Drop},
    {"--no-exceptions", false, Drop}, {"-M", false, Drop}, {"-MM", false, Drop},
    {"--generate-dependencies", false, Drop}, {"--generate-nonsystem-dependencies", false, Drop},
    {"-E", false, Drop}, {"--preprocess", false, Drop}, {"--generate-dependencies-with-compile", false, Drop},
    {"--generate-nonsystem-dependencies-with-compile", false, Drop}, {"--generate-dependency-targets", false, Drop},
    {"-Wreorder", false, Drop}, {"-Wdefault-stream-launch", false, Drop}, {"-Wmissing-launch-bounds", false, Drop},
    {"-Wext-lambda-captures-this", false, Drop}, {"--disable-warnings", false, Drop}, {"--m64", false, Drop}
};

} // namespace

llvm::ArrayRef<NvccOption> nvccOptions() { return kOptions; }

const NvccOption *findNvccOption(llvm::StringRef spelling) {
  const NvccOption *end = std::end(kOptions);
  const NvccOption *o = std::find_if(std::begin(kOptions), end, [&](const NvccOption &x) { return x.spelling == spelling; });
  return o == end ? nullptr : o;
}

} // namespace ptb
