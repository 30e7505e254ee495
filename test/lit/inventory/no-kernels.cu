// A file without kernels: an empty inventory, exit code 0; the rewrite writes the file with the
// runtime include added and nothing else changed.
// RUN: %ptb-transform --list-kernels %s | FileCheck %s --check-prefix=TEXT
// RUN: %ptb-transform --list-kernels --format=json %s | FileCheck %s --check-prefix=JSON
// RUN: %ptb-transform %s -o %t.cu
// RUN: tail -n +4 %t.cu | diff - %s

int add(int a, int b) { return a + b; }

// TEXT: no-kernels.cu: 0 kernels
// JSON: "kernels": [],
// JSON-NEXT: "other_launches": []
