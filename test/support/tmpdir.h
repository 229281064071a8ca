/* Scratch directories for tests: made fresh under $TMPDIR, removed with
 * everything in them. */
#ifndef TOPO_TEST_SUPPORT_TMPDIR_H
#define TOPO_TEST_SUPPORT_TMPDIR_H

#include <stddef.h>

/* Makes a new directory "$TMPDIR/topo-<tag>-XXXXXX" (/tmp when TMPDIR is
 * unset or empty) and writes its path into dir (size bytes). 0, or -1 with
 * errno set (ENAMETOOLONG when the path does not fit). */
int topo_test_tmpdir_make(char *dir, size_t size, const char *tag);

/* Removes dir and everything under it (symbolic links are removed, not
 * followed). 0, or -1 when something could not be removed. */
int topo_test_tmpdir_remove(const char *dir);

#endif
