// fuse-kernels: Tacker-style fusion of Tensor-Core and CUDA-Core kernels (docs/fuse-kernels.md).
// For now it parses the inputs and prints the inventory of the kernels to fuse; the fusion itself is
// the fuse-kernels issue's work.
#include "KernelInventory.h"
#include "ToolMain.h"
#include "ToolRunner.h"

#include "clang/Basic/Version.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/core.h>

int main(int argc, char **argv) {
  std::vector<std::string> toolArgs, compilerArgs;
  ptb::splitAtDashDash(argc, argv, toolArgs, compilerArgs);
  CLI::App app{"fuse-kernels: fuse Tensor-Core and CUDA-Core kernels into one PTB kernel (not yet: inventory only)"};
  app.set_version_flag("--version", fmt::format("fuse-kernels {} (clang {})", PTB_VERSION, CLANG_VERSION_STRING));
  app.name("fuse-kernels");
  ptb::ParseRequest req;
  std::vector<std::string> kernels;
  std::string format = "text";
  ptb::addParseOptions(app, req);
  app.add_option("--kernel", kernels, "A kernel to fuse, by name (repeat)");
  app.add_option("--format", format, "Inventory format: text or json")->check(CLI::IsMember({"text", "json"}));
  if (int rc = ptb::parseCommandLine(app, toolArgs); rc >= 0) return rc;
  req.argsAfterDashDash = compilerArgs;
  std::vector<ptb::Inventory> inventories;
  bool ok = ptb::forEachTranslationUnit(req, [&](clang::CompilerInstance &, clang::ASTContext &ctx) {
    ptb::Inventory inv = ptb::analyzeTranslationUnit(ctx);
    if (!kernels.empty()) {
      std::vector<ptb::Kernel> keep;
      for (auto &k : inv.kernels)
        if (std::find(kernels.begin(), kernels.end(), k.name) != kernels.end() ||
            std::find(kernels.begin(), kernels.end(), k.qualifiedName) != kernels.end())
          keep.push_back(k);
      inv.kernels = keep;
    }
    inventories.push_back(std::move(inv));
  });
  if (!ok) return 1;
  llvm::outs() << (format == "json" ? ptb::formatInventoryJson(inventories) : ptb::formatInventoryText(inventories));
  return 0;
}
