/*
 * sysexits_ps: the exit codes of perfship(1), named once.
 */
#ifndef PS_SYSEXITS_H
#define PS_SYSEXITS_H

#define PS_EXIT_OK 0
#define PS_EXIT_USAGE 64
#define PS_EXIT_DATAERR 65
#define PS_EXIT_NOINPUT 66 /* convert: an input PATH could not be read */
#define PS_EXIT_UNAVAILABLE 69
#define PS_EXIT_SOFTWARE 70
#define PS_EXIT_CANTCREAT 73 /* report: the page could not be written */
#define PS_EXIT_IOERR 74 /* run --once: the state file could not be saved */
#define PS_EXIT_TEMPFAIL 75 /* another agent holds the state directory */
#define PS_EXIT_CONFIG 78

#endif
