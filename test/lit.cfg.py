# lit configuration for kite's FileCheck tests.
import os
import lit.formats

config.name = "kite"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".cpp"]  # lit sees `.kite.cpp` as `.cpp`
config.excludes = ["Inputs", "CMakeLists.txt", "unit", "reference", "correctness"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kite_obj_root, "test")

tools = [
    os.path.join(config.kite_tools_dir, "kite-opt"),
    os.path.join(config.kite_tools_dir, "kite"),
]
config.substitutions.append(("%kite_src", config.kite_src_root))
for tool in tools:
    name = os.path.basename(tool)
    # Longest names first so `kite-opt` is not rewritten as `kite`-opt.
    # `kite` in a file name (examples/add.kite.cpp) is not the tool.
    config.substitutions.insert(0, ("\\b" + name + "\\b" if name == "kite-opt" else "(?<![-\\w/.])kite(?![-\\w])", tool))
for name in ["FileCheck", "not", "count", "split-file"]:
    config.substitutions.append(("\\b" + name + "\\b", os.path.join(config.llvm_tools_dir, name)))
config.environment["KITE_CACHE_DIR"] = os.path.join(config.test_exec_root, "cache")
