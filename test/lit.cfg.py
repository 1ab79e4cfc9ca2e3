# lit configuration for Strider's structural tests.
import os
import lit.formats

config.name = "Strider"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".lir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "unittests", "fuzz"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.strider_obj_root, "test")

config.environment["FILECHECK_OPTS"] = "-enable-var-scope"
# Tools first: build/bin, then LLVM's FileCheck/not/count.
path = os.pathsep.join([config.strider_tools_dir, config.llvm_tools_dir,
                        config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["PATH"] = path
# ASan/UBSan builds: fail on the first report, never hide a crash.
for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
# Sanitized builds reserve terabytes of address space (tests that limit
# it with ulimit -v cannot run there).
if config.strider_sanitized:
    config.available_features.add("sanitizer")
if config.strider_has_cuda:
    config.available_features.add("cuda")
    # A machine with an NVIDIA GPU and its driver (tests of the no-GPU
    # behaviour are unsupported there).
    import shutil, subprocess
    smi = shutil.which("nvidia-smi")
    if smi and subprocess.run([smi, "-L"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0:
        config.available_features.add("gpu")
