/* Shared by the ibnetdiscover reader's files: text helpers (ibnetdiscover_text.c),
 * the scan of a dump into stanza records (ibnetdiscover_scan.c), which
 * ibnetdiscover.c turns into facts once the whole dump is read. */
#ifndef TOPO_SOURCES_IBNETDISCOVER_INTERNAL_H
#define TOPO_SOURCES_IBNETDISCOVER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "topo/array.h"
#include "topo/error.h"
#include "topo/ibnetdiscover.h"
#include "topo/pool.h"
#include "topo/strmap.h"

/* A line of text: [p, end). */
typedef struct ibd_span {
    const char *p;
    const char *end;
} ibd_span;

int ibd_is_blank(char c);
/* Skips blanks (spaces, tabs) at the front. */
void ibd_skip_blanks(ibd_span *s);
/* Drops blanks at both ends. */
void ibd_trim(ibd_span *s);
/* 1 to 16 hex digits at s->p into *out, consumed: 0, or -1 (nothing
 * consumed) when there are none or more than 16. */
int ibd_take_hex(ibd_span *s, uint64_t *out);
/* "0x" and hex digits (as ibd_take_hex): 0 or -1. */
int ibd_take_guid(ibd_span *s, uint64_t *out);
/* Formats the error "source:line: <fmt>" and records the position. */
int ibd_fail(topo_err *err, int code, const char *source, int line, const char *fmt, ...)
    TOPO_PRINTF(5, 6);

/* One node: of a stanza (Switch, Ca or Rt) as the dump gives it, or only
 * named as the remote end of port lines (stanza 0: a partial dump). */
typedef struct ibd_node {
    uint64_t guid;    /* the node GUID of its quoted id */
    uint64_t sysimg;  /* from its sysimgguid= line */
    const char *id;   /* "S-<16 hex>" (pooled) */
    const char *desc; /* the node description as quoted, NULL when none */
    /* filled by ibnetdiscover.c for adapters */
    const char *host; /* the host its description (or map entry) names, or NULL */
    const char *port; /* the adapter part, or NULL */
    char kind;        /* 'S', 'H' (a channel adapter) or 'R' */
    unsigned char stanza;      /* a header of it was read */
    unsigned char has_sysimg;
    unsigned char aggregation; /* a SHARP Aggregation Node: inside its switch */
    unsigned char disputed;    /* an adapter whose GUID another record claims too */
} ibd_node;

/* A Ca stanza repeating an adapter's id with another description: two
 * host records claiming one GUID (rare: kept beside the nodes). */
typedef struct ibd_dup {
    uint32_t node;
    const char *desc; /* pooled, interned */
} ibd_dup;

/* One port line: a cable from the stanza's node to a remote node, 24 bytes
 * (a large dump has hundreds of thousands): both ends are node indices,
 * the remote's made when a line first names it (the scan stops at
 * INT32_MAX nodes), its description from the line's comment an index into
 * desc_strs; the port numbers and the line, for the consistency checks
 * (ibnetdiscover_check.c) and their messages. */
#define IBD_NO_DESC UINT32_MAX
typedef struct ibd_port {
    uint32_t node;  /* the stanza's node, an index into nodes */
    uint32_t rnode; /* the remote node */
    uint32_t rdesc; /* the remote description from the comment, or IBD_NO_DESC */
    uint32_t port;  /* the local port number, [1] */
    uint32_t rport; /* the remote's */
    uint32_t line;
} ibd_port;

typedef struct ibd_dump {
    const char *source;
    topo_pool *pool;
    TOPO_ARRAY(ibd_node) nodes;
    TOPO_ARRAY(uint32_t) stanzas; /* the nodes with a stanza, in the dump's order */
    TOPO_ARRAY(ibd_port) ports;
    /* The scan's indices, freed when it ends (ibd_scan_end): */
    topo_strmap *index; /* node id -> index into nodes */
    /* Descriptions are interned: a node is named on every port line that
     * reaches it, and one copy per line was most of a large dump's memory. */
    topo_strmap *descs; /* description -> index into desc_strs */
    char *scratch; /* a description being looked up, NUL-terminated */
    size_t scratch_cap;
    TOPO_ARRAY(const char *) desc_strs;
    TOPO_ARRAY(ibd_dup) dups;
    topo_ibnetdiscover_stats stats;
} ibd_dump;

/* source is borrowed. 0 or TOPO_ENOMEM. */
int ibd_dump_init(ibd_dump *d, const char *source, topo_err *err);
void ibd_dump_dispose(ibd_dump *d);
/* Reads every line of text into d's records (stats.lines, switches,
 * routers, skipped_lines counted here). TOPO_EINVALID naming the line. */
int ibd_scan(ibd_dump *d, const char *text, size_t len, topo_err *err);
/* The scanner's state between lines, for a dump read line by line
 * (topo_ibnetdiscover_read_file streams the file instead of holding it). */
typedef struct ibd_scanner {
    ibd_dump *d;
    int line;
    size_t node;     /* the current stanza's node, or SIZE_MAX between stanzas */
    uint64_t sysimg; /* the stanza's sysimgguid= so far */
    int has_sysimg;
    topo_err *err;
} ibd_scanner;
void ibd_scan_begin(ibd_scanner *s, ibd_dump *d, topo_err *err);
/* One line of n bytes, without its '\n' (a '\r' before it is dropped here),
 * and no NUL in it: the caller checks the whole dump for NULs first, as
 * ibd_scan does, so that error wins over the lines'. */
int ibd_scan_line(ibd_scanner *s, const char *p, size_t n);
/* After the last line: stats.lines, the skipped-lines summary; frees the
 * scan's indices (ibd_find_node no longer answers). */
void ibd_scan_end(ibd_scanner *s);
/* The consistency of a whole dump, once scanned (ibnetdiscover_check.c):
 * at least one stanza, every node a port line names has a stanza of its
 * own, and every cable
 * between two stanzas is printed from both ends (port p of A reaches B's
 * port q, and B's port q reaches A's port p). TOPO_EINVALID naming the
 * first port line that breaks either. */
int ibd_check(const ibd_dump *d, topo_err *err);
/* TOPO_EINVALID naming line when the text's last byte (last) is not a
 * newline: ibnetdiscover ends every line, so the dump was cut while
 * written. 0 for an empty text (has_text 0). */
int ibd_check_last_byte(const char *source, int has_text, char last, int line, topo_err *err);
/* The line of the NUL byte at nul, counting from text at line. */
int ibd_nul_line(const char *text, const char *nul, int line);
/* "<kind>-<16 hex>" and its NUL. */
#define IBD_ID_SIZE 19
void ibd_format_id(char out[IBD_ID_SIZE], char kind, uint64_t guid);
/* The same in the pool. NULL when out of memory. */
const char *ibd_node_id(ibd_dump *d, char kind, uint64_t guid);
/* The index of a node by kind and GUID, or SIZE_MAX (during the scan). */
size_t ibd_find_node(const ibd_dump *d, char kind, uint64_t guid);

#endif
