# cmake -DPTX=in.ptx -DOUT=out.cc -P embed_ptx.cmake
# Writes a C++ file that holds the PTX text as one raw string literal.
file(READ ${PTX} text)
string(FIND "${text}" ")gd_ptx\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${PTX} contains the raw-string delimiter")
endif()
file(WRITE ${OUT}.tmp
  "// Generated at build time from src/burn/kernels/burn_kernels.ll by llc; do not edit.\n"
  "#include \"burn/kernels.h\"\n\n"
  "namespace gd::burn {\n\n"
  "const char* kernels_ptx() {\n"
  "  static const char text[] = R\"gd_ptx(${text})gd_ptx\";\n"
  "  return text;\n"
  "}\n\n"
  "}  // namespace gd::burn\n")
file(RENAME ${OUT}.tmp ${OUT})
