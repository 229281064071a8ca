/* A fabric node's identity: its 64-bit node GUID, written one way by every
 * fabric source (UFM, ibnetdiscover), so that one switch is one switch
 * whichever source saw it: 16 lower-case hex digits, leading zeros kept, no
 * "0x" and no "S-"/"H-" kind prefix ("aa00000000000001"). The label value
 * of a fabric domain is its lowest switch's id, so it is this text too. */
#ifndef TOPO_GUID_H
#define TOPO_GUID_H

#include <stddef.h>
#include <stdint.h>

#include "topo/error.h"

/* 16 hex digits and the NUL. */
#define TOPO_GUID_TEXT_SIZE 17

/* The 1 to 16 hex digits (either case) at the front of the n bytes at s
 * into *out, their count into *used: 0, or -1 when there is none or more
 * than 16 (a number wider than 64 bits). For tokenizers; whole strings go
 * through topo_guid_parse. */
int topo_guid_scan(uint64_t *out, size_t *used, const char *s, size_t n);

/* The forms tools print, the whole of the n bytes at s: "aa00000000000001"
 * (UFM), "0xAA00000000000001", "S-aa00000000000001"/"H-..."/"R-..."
 * (ibnetdiscover's node ids), "0xaa00000000000001(aa00000000000002)"
 * (ibnetdiscover's switchguid=, the port GUID in parentheses ignored); 1 to
 * 16 digits, either case. Anything else is TOPO_EINVALID naming field:
 * "<field>: not a GUID: \"...\"". */
int topo_guid_parse(uint64_t *out, const char *s, size_t n, const char *field, topo_err *err);

/* The one way a GUID is written: 16 lower-case hex digits. */
void topo_guid_format(char out[TOPO_GUID_TEXT_SIZE], uint64_t guid);

/* topo_guid_parse, then topo_guid_format. */
int topo_guid_normalise(char out[TOPO_GUID_TEXT_SIZE], const char *s, size_t n, const char *field,
                        topo_err *err);

#endif
