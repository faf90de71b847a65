"""Builds halo._halo with CMake (see pyproject.toml): configures the repository with only the
library and the module (no tests, no command-line tool) for the Python running this, builds
the module's target, and puts the extension into the package."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = Path(self.build_temp).resolve() / "cmake"
        build.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        if not shutil.which("nvcc") and Path("/usr/local/cuda/bin/nvcc").exists():
            env["PATH"] = env.get("PATH", "") + os.pathsep + "/usr/local/cuda/bin"
        args = ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                "-DHALO_BUILD_PYTHON=ON", "-DHALO_BUILD_TESTS=OFF", "-DHALO_BUILD_TOOLS=OFF",
                f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja") and not (build / "CMakeCache.txt").exists():
            args += ["-G", "Ninja"]
        subprocess.run(args, check=True, env=env)
        jobs = env.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build), "--target", "halo_python", "-j", jobs],
                       check=True, env=env)
        built = sorted((build / "python" / "halo").glob("_halo*" + Path(
            self.get_ext_filename("_halo")).suffix))
        if not built:
            raise RuntimeError(f"CMake built no halo/_halo extension in {build}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[-1], target)


setup(ext_modules=[CMakeExtension("halo._halo")], cmdclass={"build_ext": CMakeBuild})
