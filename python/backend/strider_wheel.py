"""PEP 517 build backend of the strider Python package (standard library only).

Builds a wheel holding the package (python/strider), libstrider.so and the
strider-compile executable. The binaries come from the CMake build in
$STRIDER_BUILD_DIR when it is set (an existing build directory of this
repository, brought up to date with `cmake --build`; a relative path is
the caller's, resolved against $PWD), else from a build of
just those two targets that this backend configures in python/build/cmake.
$STRIDER_JOBS sets the build's parallelism (default 2). The wheel is
tagged py3-none-<platform>: ctypes loads the library, so it does not
depend on the Python ABI, only on the machine (and on the Debian libraries
libstrider links: libhwy, libprotobuf, libonnx_proto).

No sdist: the package is built from a checkout of the repository.
"""

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile

NAME = "strider"
PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_ROOT = os.path.dirname(PYTHON_DIR)
PACKAGE_DIR = os.path.join(PYTHON_DIR, NAME)
SUMMARY = "Strider, a layout-optimizing compiler for ONNX models: Python bindings"
REQUIRES_PYTHON = ">=3.9"
REQUIRES = ["numpy"]
# 1980-01-01, the earliest time a zip entry can hold: wheels built from the
# same files are identical.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class BuildError(RuntimeError):
    pass


def _version():
    """The project version of the repository's top-level CMakeLists.txt."""
    path = os.path.join(REPO_ROOT, "CMakeLists.txt")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise BuildError(
            f"{path}: {e.strerror}; build the package from a Strider checkout "
            "(python/ inside the repository)"
        ) from e
    match = re.search(r"project\(\s*Strider\s+VERSION\s+([0-9.]+)", text)
    if not match:
        raise BuildError(f"{path}: no 'project(Strider VERSION x.y.z)'")
    return match.group(1)


def _tag():
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"py3-none-{platform}"


def _dist_info(version):
    return f"{NAME}-{version}.dist-info"


def _metadata(version):
    readme_path = os.path.join(PYTHON_DIR, "README.md")
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {version}",
        f"Summary: {SUMMARY}",
        f"Requires-Python: {REQUIRES_PYTHON}",
    ]
    lines += [f"Requires-Dist: {req}" for req in REQUIRES]
    text = "\n".join(lines) + "\n"
    if os.path.exists(readme_path):
        with open(readme_path, encoding="utf-8") as f:
            text += "Description-Content-Type: text/markdown\n\n" + f.read()
    return text


def _wheel_file(tag):
    return (
        "Wheel-Version: 1.0\n"
        "Generator: strider_wheel (python/backend)\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {tag}\n"
    )


def _run(argv):
    print("strider_wheel: " + " ".join(argv), file=sys.stderr, flush=True)
    try:
        # The build's output goes to stderr: pip shows it with -v or on failure.
        subprocess.run(argv, check=True, stdout=sys.stderr)
    except FileNotFoundError as e:
        raise BuildError(f"{argv[0]} not found: run scripts/setup.sh") from e
    except subprocess.CalledProcessError as e:
        raise BuildError(f"'{' '.join(argv)}' failed with status {e.returncode}") from e


def _build_binaries():
    """Builds libstrider and strider-compile; returns their paths."""
    jobs = os.environ.get("STRIDER_JOBS", "2")
    build_dir = os.environ.get("STRIDER_BUILD_DIR")
    if build_dir:
        # pip runs this backend inside python/: a relative path is the
        # caller's, resolved against the shell's directory ($PWD).
        if not os.path.isabs(build_dir):
            build_dir = os.path.join(os.environ.get("PWD", os.getcwd()), build_dir)
        build_dir = os.path.abspath(build_dir)
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            raise BuildError(
                f"STRIDER_BUILD_DIR={build_dir} is not a CMake build directory "
                "(configure it with scripts/build.sh, or unset it to build here)"
            )
    else:
        build_dir = os.path.join(PYTHON_DIR, "build", "cmake")
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            argv = ["cmake", "-S", REPO_ROOT, "-B", build_dir]
            if shutil.which("ninja"):
                argv += ["-G", "Ninja"]
            argv += [
                "-DCMAKE_BUILD_TYPE=Release",
                "-DSTRIDER_BUILD_TESTS=OFF",
                "-DSTRIDER_BUILD_BENCHMARKS=OFF",
                "-DSTRIDER_ENABLE_CUDA=OFF",
            ]
            if shutil.which("ccache"):
                argv.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
            _run(argv)
    _run(["cmake", "--build", build_dir, "--target", "strider", "strider-compile", "-j", jobs])
    library = os.path.realpath(os.path.join(build_dir, "lib", "libstrider.so"))
    compiler = os.path.join(build_dir, "bin", "strider-compile")
    for path in (library, compiler):
        if not os.path.isfile(path):
            raise BuildError(f"{path}: not built")
    return library, compiler


def _package_files():
    """(path in the wheel, source file) of the package's Python files."""
    files = []
    for dirpath, dirnames, filenames in os.walk(PACKAGE_DIR):
        dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", "_native"))
        for name in sorted(filenames):
            if name.endswith(".py") or name == "py.typed":
                source = os.path.join(dirpath, name)
                files.append((os.path.relpath(source, PYTHON_DIR).replace(os.sep, "/"), source))
    return files


class _WheelWriter:
    """A wheel being written: entries and their RECORD lines."""

    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.records = []

    def add(self, arcname, data, mode=0o644):
        info = zipfile.ZipInfo(arcname, ZIP_TIME)
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        self.records.append(f"{arcname},sha256={digest.decode('ascii')},{len(data)}")

    def add_file(self, arcname, source, mode=0o644):
        with open(source, "rb") as f:
            self.add(arcname, f.read(), mode)

    def close(self, record_name):
        self.records.append(f"{record_name},,")
        info = zipfile.ZipInfo(record_name, ZIP_TIME)
        info.external_attr = (0o100000 | 0o644) << 16
        self.zip.writestr(info, "\n".join(self.records) + "\n", zipfile.ZIP_DEFLATED)
        self.zip.close()


def _write_dist_info(directory, version):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(version))
    with open(os.path.join(directory, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_file(_tag()))


# PEP 517 hooks ----------------------------------------------------------------


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version = _version()
    _write_dist_info(os.path.join(metadata_directory, _dist_info(version)), version)
    return _dist_info(version)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    library, compiler = _build_binaries()
    tag = _tag()
    name = f"{NAME}-{version}-{tag}.whl"
    path = os.path.join(wheel_directory, name)
    dist_info = _dist_info(version)
    writer = _WheelWriter(path + ".part")
    try:
        for arcname, source in _package_files():
            writer.add_file(arcname, source)
        writer.add_file(f"{NAME}/_native/libstrider.so", library, 0o755)
        writer.add_file(f"{NAME}/_native/strider-compile", compiler, 0o755)
        writer.add(f"{dist_info}/METADATA", _metadata(version).encode("utf-8"))
        writer.add(f"{dist_info}/WHEEL", _wheel_file(tag).encode("utf-8"))
        writer.add(f"{dist_info}/top_level.txt", f"{NAME}\n".encode("utf-8"))
        writer.close(f"{dist_info}/RECORD")
    except BaseException:
        writer.zip.close()
        os.remove(path + ".part")
        raise
    os.replace(path + ".part", path)
    return name
