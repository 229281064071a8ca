/* A test-only allocator: every malloc of the test executable, its libraries
 * included (jansson, SQLite, OpenSSL, libc's own strdup or fopen), counted,
 * and the Nth allocation of one thread failed on request: SQLite's
 * faultsim and libgit2's failalloc, done by replacing glibc's malloc (the
 * supported way: the executable defines malloc, calloc, realloc, free and
 * the aligned ones, each forwarding to glibc's __libc_* entry).
 *
 * A sanitizer's runtime owns malloc itself, so under ASan, TSan or MSan
 * nothing is replaced and failalloc_available() is 0: tests skip. */
#ifndef TOPO_TEST_FAILALLOC_H
#define TOPO_TEST_FAILALLOC_H

#include <stddef.h>

/* 1 when allocations are counted and can be failed. */
int failalloc_available(void);

/* Counts the calling thread's allocations from now (malloc, calloc, realloc
 * to a non-zero size, the aligned ones); the nth (n >= 1) returns NULL with
 * errno ENOMEM, once, later ones succeed again; n 0 only counts. Other
 * threads are neither counted nor failed. */
void failalloc_arm(size_t n);

/* Stops failing; returns 1 when the nth allocation was reached (and failed)
 * since failalloc_arm, 0 when fewer were made. */
int failalloc_disarm(void);

/* Allocations the calling thread asked for since failalloc_arm (the failed
 * one included). */
size_t failalloc_calls(void);

/* The file (shared library or the executable) whose code asked for the
 * allocation that failed since failalloc_arm, or NULL. */
const char *failalloc_failed_in(void);

/* Blocks allocated and not freed yet, over the whole process. */
long failalloc_live(void);

#endif
