//===- Compile.cpp - `kite compile` ---------------------------------------===//
//
// This file implements `kite compile`: capture the kernels of a `.kite.cpp`
// file and print the verified kite IR (all kernels, or the one named by
// `--kernel`). The build uses it to embed captured IR in applications:
// `--emit=registration` writes a C++ source that declares each kernel with
// its C++ signature (rebuilt from the IR's function type), embeds its IR
// (with source locations) and registers it with the runtime, so that
// `kite::launch(kernel, args...)` finds it (cmake/KiteKernels.cmake).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "frontend/Capture.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

struct CompileOptions {
  std::string file;
  std::string kernel;
  std::string emit = "ir";
  std::string output = "-";
  std::vector<std::string> includeDirs;
  std::vector<std::string> defines;
  std::string resourceDir;
  bool debugLocations = false;
};

//===----------------------------------------------------------------------===//
// --emit=registration
//===----------------------------------------------------------------------===//

/// A C++ string literal for arbitrary text (the file path).
std::string cxxString(llvm::StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

/// The C++ type of a kernel parameter or result, or "" if it has none.
std::string cxxType(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  if (llvm::StringRef(text).starts_with("!kite.tensor"))
    return "kite::Tensor";
  if (auto i = llvm::dyn_cast<mlir::IntegerType>(type)) {
    switch (i.getWidth()) {
    case 64: return "int64_t";
    case 32: return "int";
    case 1: return "bool";
    default: return "";
    }
  }
  if (type.isF64())
    return "double";
  if (type.isF32())
    return "float";
  return "";
}

struct Registration {
  std::string name, returnType, params, paramTypes, argNames, ir, hash;
};

/// Writes the registration source for every kernel of `module`; returns
/// false (after an error on stderr) for a kernel that cannot be registered.
bool writeRegistration(mlir::ModuleOp module, const CompileOptions &opts,
                       const std::vector<kite::frontend::CaptureOptions::KernelDecl> &decls,
                       llvm::raw_ostream &os) {
  auto error = [&](const llvm::Twine &message) {
    llvm::WithColor::error(llvm::errs(), "kite compile") << opts.file << ": " << message << "\n";
    return false;
  };
  for (const auto &d : decls) {
    if (d.qualifiedName != d.name)
      return error("kernel '" + d.qualifiedName +
                   "' is in a namespace; kite_add_kernels supports only kernels in the global "
                   "namespace for now (move it out of the namespace)");
    if (!d.externalLinkage)
      return error("kernel '" + d.name +
                   "' has internal linkage (static or in an anonymous namespace); the "
                   "generated registration must refer to it from another file, so remove the "
                   "'static'");
  }

  std::vector<Registration> kernels;
  for (auto fn : module.getOps<mlir::func::FuncOp>()) {
    if (!fn->hasAttr("kite.kernel"))
      continue;
    Registration r;
    r.name = fn.getSymName().str();
    mlir::FunctionType type = fn.getFunctionType();
    for (unsigned i = 0; i < type.getNumInputs(); ++i) {
      std::string t = cxxType(type.getInput(i));
      if (t.empty()) {
        std::string text;
        llvm::raw_string_ostream tos(text);
        type.getInput(i).print(tos);
        return error("kernel '" + r.name + "': parameter " + llvm::Twine(i) + " has type " +
                     text + ", which has no C++ counterpart in a registration");
      }
      std::string name;
      if (auto attr = fn.getArgAttrOfType<mlir::StringAttr>(i, "kite.name"))
        name = attr.getValue().str();
      if (name.empty())
        name = "arg" + std::to_string(i);
      r.params += (i ? ", " : "") + t + " " + name;
      r.paramTypes += (i ? ", " : "") + t;
      r.argNames += (i ? "," : "") + name;
    }
    if (type.getNumResults() == 0) {
      r.returnType = "void";
    } else {
      std::vector<std::string> results;
      for (mlir::Type t : type.getResults()) {
        if (cxxType(t) != "kite::Tensor")
          return error("kernel '" + r.name + "' returns a value that is not a kite::Tensor");
        results.push_back("kite::Tensor");
      }
      if (results.size() == 1) {
        r.returnType = "kite::Tensor";
      } else {
        r.returnType = "std::tuple<";
        for (size_t i = 0; i < results.size(); ++i)
          r.returnType += (i ? ", " : "") + results[i];
        r.returnType += ">";
      }
    }
    // The kernel's own module and its hash (a cache key).
    kite::frontend::KernelText text = kite::frontend::kernelText(module, r.name);
    r.ir = std::move(text.ir);
    r.hash = std::move(text.hash);
    kernels.push_back(std::move(r));
  }

  os << "// Generated by `kite compile --emit=registration` from\n// " << opts.file
     << "\n// Do not edit: it is rewritten at every build.\n"
     << "#include <kite/runtime.hpp>\n\n#include <cstdint>\n#include <tuple>\n\n"
     << "// The kernels, as the source defines them (in the global namespace).\n";
  for (const Registration &r : kernels)
    os << r.returnType << " " << r.name << "(" << r.params << ");\n";
  os << "\nnamespace {\n";
  for (const Registration &r : kernels) {
    std::string delim = "kite_ir";
    while (r.ir.find(")" + delim + "\"") != std::string::npos)
      delim += "_";
    os << "\n// kernel " << r.name << "\nconstexpr char kite_ir_" << r.name << "[] = R\"" << delim
       << "(" << r.ir << ")" << delim << "\";\n"
       << "const kite::KernelRegistration kite_registration_" << r.name << "{kite::KernelSource{\n"
       << "    reinterpret_cast<const void *>(static_cast<" << r.returnType << " (*)("
       << r.paramTypes << ")>(&::" << r.name << ")),\n"
       << "    \"" << r.name << "\",\n"
       << "    std::string_view(kite_ir_" << r.name << ", sizeof(kite_ir_" << r.name
       << ") - 1),\n"
       << "    \"" << r.hash << "\",\n"
       << "    " << cxxString(opts.file) << ",\n"
       << "    \"" << r.argNames << "\"}};\n";
  }
  os << "\n} // namespace\n";
  return true;
}

int runCompile(const CompileOptions &opts, const kite::cli::Context &context) {
  // -I directories come first, so they can override kite's own headers.
  kite::frontend::CaptureOptions capture =
      kite::cli::captureOptions(context, opts.kernel, opts.includeDirs);
  capture.defines = opts.defines;
  if (!opts.resourceDir.empty())
    capture.resourceDir = opts.resourceDir;

  std::vector<kite::frontend::CaptureOptions::KernelDecl> decls;
  capture.kernelDecls = &decls;

  mlir::MLIRContext mlirContext;
  auto module = kite::frontend::captureFile(mlirContext, opts.file, capture);
  if (mlir::failed(module))
    return kite::cli::kUserError;

  std::string error;
  auto out = mlir::openOutputFile(opts.output, &error);
  if (!out) {
    llvm::WithColor::error(llvm::errs(), "kite compile")
        << "cannot write '" << opts.output << "': " << error << "\n";
    return kite::cli::kUserError;
  }
  if (opts.emit == "registration") {
    if (!writeRegistration(**module, opts, decls, out->os()))
      return kite::cli::kUserError;
    out->keep();
    return kite::cli::kSuccess;
  }
  mlir::OpPrintingFlags flags;
  if (opts.debugLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  (*module)->print(out->os(), flags);
  out->os() << "\n";
  out->keep();
  return kite::cli::kSuccess;
}

} // namespace

void kite::cli::addCompileCommand(CLI::App &app, Context &context) {
  auto opts = std::make_shared<CompileOptions>();
  CLI::App *cmd = app.add_subcommand(
      "compile", "Capture the kernels of a .kite.cpp file into kite IR");
  cmd->add_option("file", opts->file, "The kernel source file (.kite.cpp)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--kernel", opts->kernel,
                  "Capture only this kernel (default: every kernel)");
  cmd->add_option("--emit", opts->emit,
                  "What to write: ir (the captured kite IR), registration (a C++ source "
                  "that embeds the IR and registers each kernel for kite::launch; used by "
                  "kite_add_kernels)")
      ->check(CLI::IsMember({"ir", "registration"}))
      ->default_str("ir");
  cmd->add_option("-o,--output", opts->output, "Output file ('-': stdout)")
      ->default_str("-");
  cmd->add_option("-I,--include", opts->includeDirs,
                  "Add a header search directory (searched before kite's "
                  "own include directory)");
  cmd->add_option("-D,--define", opts->defines,
                  "Define a macro for the parse (NAME or NAME=VALUE)");
  cmd->add_option("--resource-dir", opts->resourceDir,
                  "Clang's resource directory (default: $KITE_CLANG_RESOURCE_DIR, "
                  "<prefix>/lib/clang/19 next to kite, or the one kite was "
                  "built with)");
  cmd->add_flag("--debug-locations", opts->debugLocations,
                "Print each op's source location (loc(...)) in the IR");
  cmd->callback([opts, &context] { context.exitCode = runCompile(*opts, context); });
}
