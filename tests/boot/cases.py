"""The example programs the suites run, with the exit status each must give
under every configuration and on Linux."""
from ukl.layout import EXAMPLES, TEST_PROGRAMS

# The tests' own ordinary (CPL3) programs, in their guests' /bin only:
# spawn runs /bin/cpl; control, sqpoll and tracedexec run /bin/ukl-intruder.
TEST_TOOLS = {"cpl": EXAMPLES / "cpl.c", "ukl-intruder": TEST_PROGRAMS / "intruder.c"}

# Programs whose behaviour the base-model suite checks in detail, on 1 and 2 CPUs.
BASE_MODEL = [("signals", 0), ("memory", 0), ("kaddr", 0), ("atexit", 7), ("spawn", 0),
              ("tls", 0), ("stack", 0), ("threads", 0), ("cancel", 0), ("time", 0), ("cxx", 0),
              ("fork", 0), ("sharedmutex", 0), ("ntflag", 0), ("gpfault", 0), ("fpusleep", 0)]
# Programs that must print the same at CPL0 and at CPL3, and print something.
SAME_ON_BOTH = [("hello", 3), ("files", 0), ("heap", 0), ("nullderef", 139), ("rawsyscall", 0),
                ("shm", 0), ("ownwriters", 0), ("devzero", 0)]
# The examples suite of the configuration matrix.
SUITE = sorted(set(BASE_MODEL + SAME_ON_BOTH))
