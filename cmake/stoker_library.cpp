// libstoker.so is the static layers' objects (cmake/StokerInstall.cmake links them whole);
// CMake wants a source file for a library, and this is it.
