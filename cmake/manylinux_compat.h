/* Included in every C++ file of a wheel build (STOKER_MANYLINUX_COMPAT): binds the few symbols
   GCC 12's libstdc++ versions newer than manylinux_2_34's (RHEL 9, GCC 11) to the versions that
   older libstdc++ has, so that the wheel installs on glibc 2.34 systems. The old versions
   behave the same for stoker's uses (they differ only under pthread_cancel). */
#if defined(__x86_64__) && defined(__linux__) && defined(__cplusplus)
__asm__(".symver _ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE,"
        "_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE@GLIBCXX_3.4.11");
#endif
