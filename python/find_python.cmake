# Finds what the Python module needs and sets HALO_PYTHON_FOUND (and HALO_PYTHON_WHY_NOT):
#  - a Python 3 interpreter that imports NumPy, with its development headers: Python3_EXECUTABLE
#    if given, else the first of `python3` on PATH and /usr/bin/python3 that imports NumPy (a
#    pyenv or venv python3 without NumPy is passed over for the system one);
#  - pybind11's headers: its CMake package (pybind11::headers), else HALO_PYBIND11_INCLUDE, else
#    the include folder of the interpreter's pybind11 package. The target halo_pybind11 carries them.
set(HALO_PYTHON_FOUND OFF)
set(HALO_PYTHON_WHY_NOT "")
# A GNU compiler must link libstdc++ as a shared library into an extension. One that finds only
# libstdc++.a (its libstdc++.so missing or a broken link) puts a partial static copy in the
# module beside the shared one that Highway, FFTW or cuFFT bring: two copies of the locale
# machinery, and the first number formatted crashes.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so
                  OUTPUT_VARIABLE _halo_libstdcxx OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT IS_ABSOLUTE "${_halo_libstdcxx}" OR NOT EXISTS "${_halo_libstdcxx}")
    string(CONCAT HALO_PYTHON_WHY_NOT "${CMAKE_CXX_COMPILER} finds no shared libstdc++.so (it "
           "answers '${_halo_libstdcxx}') and would link a static copy into the module, which "
           "crashes: configure with another compiler (CXX=..., and CUDAHOSTCXX=... with CUDA)")
    return()
  endif()
endif()
if(NOT Python3_EXECUTABLE)
  find_program(_halo_py_path python3 NO_CACHE)
  foreach(_halo_py IN ITEMS ${_halo_py_path} /usr/bin/python3)
    if(EXISTS "${_halo_py}")
      execute_process(COMMAND "${_halo_py}" -c "import numpy" RESULT_VARIABLE _halo_rc
                      OUTPUT_QUIET ERROR_QUIET)
      if(_halo_rc EQUAL 0)
        set(Python3_EXECUTABLE "${_halo_py}" CACHE FILEPATH "The Python of the halo module")
        break()
      endif()
    endif()
  endforeach()
endif()
if(Python3_EXECUTABLE)
  find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
endif()
if(NOT Python3_FOUND)
  set(HALO_PYTHON_WHY_NOT "no Python 3 with NumPy and development headers (python3-dev)")
  return()
endif()
execute_process(COMMAND "${Python3_EXECUTABLE}" -c "import numpy" RESULT_VARIABLE _halo_rc
                OUTPUT_QUIET ERROR_QUIET)
if(NOT _halo_rc EQUAL 0)
  set(HALO_PYTHON_WHY_NOT "${Python3_EXECUTABLE} cannot import numpy")
  return()
endif()
if(NOT TARGET halo_pybind11)
  set(_halo_pybind11_dir "")
  if(NOT HALO_PYBIND11_INCLUDE)
    find_package(pybind11 CONFIG QUIET)
  endif()
  if(TARGET pybind11::headers)
    add_library(halo_pybind11 INTERFACE IMPORTED GLOBAL)
    target_link_libraries(halo_pybind11 INTERFACE pybind11::headers)
  else()
    set(_halo_pybind11_dir "${HALO_PYBIND11_INCLUDE}")
    if(NOT _halo_pybind11_dir)
      execute_process(COMMAND "${Python3_EXECUTABLE}" -c
                              "import pybind11; print(pybind11.get_include())"
                      RESULT_VARIABLE _halo_rc OUTPUT_VARIABLE _halo_pybind11_dir
                      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
    if(NOT EXISTS "${_halo_pybind11_dir}/pybind11/pybind11.h")
      set(HALO_PYTHON_WHY_NOT "pybind11 not found (install pybind11-dev, or set "
                              "HALO_PYBIND11_INCLUDE to the folder holding pybind11/)")
      return()
    endif()
    add_library(halo_pybind11 INTERFACE IMPORTED GLOBAL)
    target_include_directories(halo_pybind11 INTERFACE "${_halo_pybind11_dir}")
  endif()
endif()
set(HALO_PYTHON_FOUND ON)
