# Finds what the Python module needs and sets ASYNCDP_PYTHON_FOUND.
#
# The interpreter must import numpy, scipy, matplotlib and pytest (scripts/install-deps.sh installs Debian's
# python3-numpy, python3-scipy, python3-matplotlib, python3-pytest for /usr/bin/python3). A python3 earlier
# in PATH without them (a pyenv shim, a bare virtualenv) is skipped, so the module is built for, and tested
# with, an interpreter that can run the whole suite. Pass -DPython3_EXECUTABLE=... to choose one yourself.
set(ASYNCDP_PYTHON_FOUND OFF)

function(asyncdp_python_has_modules result candidate)
  execute_process(COMMAND ${candidate} -c "import numpy, scipy, matplotlib, pytest"
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    set(${result} FALSE PARENT_SCOPE)
  endif()
endfunction()

if(NOT Python3_EXECUTABLE)
  find_program(ASYNCDP_PYTHON_INTERPRETER NAMES python3 NAMES_PER_DIR VALIDATOR asyncdp_python_has_modules)
  if(ASYNCDP_PYTHON_INTERPRETER)
    set(Python3_EXECUTABLE ${ASYNCDP_PYTHON_INTERPRETER})
  endif()
endif()

if(Python3_EXECUTABLE)
  find_package(Python3 COMPONENTS Interpreter Development.Module)
  find_package(pybind11 CONFIG QUIET)
endif()

if(Python3_FOUND AND pybind11_FOUND)
  set(ASYNCDP_PYTHON_FOUND ON)
  message(STATUS "asyncdp: Python module for ${Python3_EXECUTABLE} (${Python3_VERSION}), pybind11 ${pybind11_VERSION}")
else()
  message(STATUS "asyncdp: Python module not built (needs python3 with numpy, scipy, matplotlib, pytest, "
                 "python3-dev and pybind11-dev: scripts/install-deps.sh)")
endif()
