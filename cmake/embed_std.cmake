# Writes OUT, a C++ file holding every DIR/*.sx as a string, so `(require std/nn)`
# needs no installed files.
file(GLOB files ${DIR}/*.sx)
list(SORT files)
set(body "#include \"lang/std_files.h\"\nnamespace sx {\nconst std::vector<StdFile>& std_files() {\n  static const std::vector<StdFile> files = {\n")
foreach(f ${files})
  get_filename_component(name ${f} NAME_WE)
  file(READ ${f} text HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "\\\\x\\1" text "${text}")
  string(APPEND body "    {\"std/${name}\", std::string(\"${text}\", sizeof(\"${text}\") - 1)},\n")
endforeach()
string(APPEND body "  };\n  return files;\n}\n}  // namespace sx\n")
file(WRITE ${OUT} "${body}")
