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

/* One node stanza (Switch, Ca or Rt) as the dump gives it. */
typedef struct ibd_node {
    char kind;        /* 'S', 'H' (a channel adapter) or 'R' */
    uint64_t guid;    /* the node GUID of its quoted id */
    const char *id;   /* "S-<16 hex>" (pooled) */
    const char *desc; /* the node description as quoted, NULL when none */
    uint64_t sysimg;  /* from its sysimgguid= line */
    int has_sysimg;
    int line;
    /* filled by ibnetdiscover.c for adapters */
    int aggregation;  /* a SHARP Aggregation Node: inside its switch */
    const char *host; /* the host its description (or map entry) names, or NULL */
    const char *port; /* the adapter part, or NULL */
} ibd_node;

/* One port line: a cable from the stanza's node to a remote node. Packed
 * to 32 bytes: a large dump has hundreds of thousands (node indices fit in
 * 32 bits, the scan stops at INT32_MAX nodes). */
#define IBD_NO_NODE UINT32_MAX
typedef struct ibd_port {
    uint32_t node;  /* the stanza's node, an index into nodes */
    uint32_t rnode; /* the remote's stanza once resolved, or IBD_NO_NODE */
    int line;
    char rkind; /* the remote's 'S', 'H' or 'R' */
    uint64_t rguid;
    const char *rdesc; /* the remote description from the comment, or NULL */
} ibd_port;

typedef struct ibd_dump {
    const char *source;
    topo_pool *pool;
    TOPO_ARRAY(ibd_node) nodes;
    TOPO_ARRAY(ibd_port) ports;
    topo_strmap *index; /* node id -> index into nodes */
    /* Descriptions are interned: a node is named on every port line that
     * reaches it, and one copy per line was most of a large dump's memory. */
    topo_strmap *descs; /* description -> index into desc_strs */
    TOPO_ARRAY(const char *) desc_strs;
    char *scratch; /* a description being looked up, NUL-terminated */
    size_t scratch_cap;
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
/* After the last line: stats.lines, the skipped-lines summary. */
void ibd_scan_end(ibd_scanner *s);
/* The line of the NUL byte at nul, counting from text at line. */
int ibd_nul_line(const char *text, const char *nul, int line);
/* "<kind>-<16 hex>" and its NUL. */
#define IBD_ID_SIZE 19
void ibd_format_id(char out[IBD_ID_SIZE], char kind, uint64_t guid);
/* The same in the pool. NULL when out of memory. */
const char *ibd_node_id(ibd_dump *d, char kind, uint64_t guid);
/* The index of a node by kind and GUID, or SIZE_MAX. */
size_t ibd_find_node(const ibd_dump *d, char kind, uint64_t guid);

#endif
