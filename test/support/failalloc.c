/* See failalloc.h. glibc documents replacing malloc by defining malloc,
 * free, calloc and realloc (and, to keep the counts whole, the aligned
 * allocators) in the program: the dynamic linker binds every library's
 * calls, libc's internal ones included, to these. */
#define _GNU_SOURCE
#include "failalloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(__GLIBC__)
#define FAILALLOC_OFF 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define FAILALLOC_OFF 1
#endif
#endif

#ifdef FAILALLOC_OFF

int failalloc_available(void)
{
    return 0;
}

void failalloc_arm(size_t n)
{
    (void)n;
}

int failalloc_disarm(void)
{
    return 0;
}

size_t failalloc_calls(void)
{
    return 0;
}

const char *failalloc_failed_in(void)
{
    return NULL;
}

long failalloc_live(void)
{
    return 0;
}

#else

/* glibc's own allocator under its exported internal names. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t nmemb, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void __libc_free(void *ptr);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

/* Per thread, so that only the thread under test is failed (initial-exec
 * TLS of the executable: reading it never allocates). */
static _Thread_local int armed;
static _Thread_local size_t fail_at; /* 0: count only */
static _Thread_local size_t calls;
static _Thread_local int fired;
static _Thread_local const void *fired_at; /* the failed allocation's caller */
static atomic_long live;

/* Counts one allocation of an armed thread, asked for by code at caller;
 * 1 when it is to fail. */
static int fail_now(const void *caller)
{
    if (!armed)
        return 0;
    if (++calls != fail_at)
        return 0;
    fired = 1;
    fired_at = caller;
    errno = ENOMEM;
    return 1;
}

#define CALLER __builtin_return_address(0)

static void *counted(void *p)
{
    if (p != NULL)
        atomic_fetch_add_explicit(&live, 1, memory_order_relaxed);
    return p;
}

static void *malloc_from(size_t size, const void *caller)
{
    return fail_now(caller) ? NULL : counted(__libc_malloc(size));
}

void *malloc(size_t size)
{
    return malloc_from(size, CALLER);
}

void *calloc(size_t nmemb, size_t size)
{
    return fail_now(CALLER) ? NULL : counted(__libc_calloc(nmemb, size));
}

static void *realloc_from(void *ptr, size_t size, const void *caller)
{
    if (ptr == NULL)
        return malloc_from(size, caller);
    if (size == 0) {
        /* glibc frees ptr and returns NULL */
        void *p = __libc_realloc(ptr, 0);
        if (p == NULL)
            atomic_fetch_sub_explicit(&live, 1, memory_order_relaxed);
        return p;
    }
    return fail_now(caller) ? NULL : __libc_realloc(ptr, size);
}

void *realloc(void *ptr, size_t size)
{
    return realloc_from(ptr, size, CALLER);
}

void *reallocarray(void *ptr, size_t nmemb, size_t size)
{
    if (size != 0 && nmemb > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc_from(ptr, nmemb * size, CALLER);
}

void free(void *ptr)
{
    if (ptr == NULL)
        return;
    atomic_fetch_sub_explicit(&live, 1, memory_order_relaxed);
    __libc_free(ptr);
}

static void *memalign_from(size_t alignment, size_t size, const void *caller)
{
    return fail_now(caller) ? NULL : counted(__libc_memalign(alignment, size));
}

void *memalign(size_t alignment, size_t size)
{
    return memalign_from(alignment, size, CALLER);
}

void *aligned_alloc(size_t alignment, size_t size)
{
    return memalign_from(alignment, size, CALLER);
}

int posix_memalign(void **memptr, size_t alignment, size_t size)
{
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0)
        return EINVAL;
    int saved = errno;
    void *p = memalign_from(alignment, size, CALLER);
    errno = saved; /* posix_memalign reports through its result only */
    if (p == NULL)
        return ENOMEM;
    *memptr = p;
    return 0;
}

void *valloc(size_t size)
{
    return fail_now(CALLER) ? NULL : counted(__libc_valloc(size));
}

void *pvalloc(size_t size)
{
    return fail_now(CALLER) ? NULL : counted(__libc_pvalloc(size));
}

int failalloc_available(void)
{
    return 1;
}

void failalloc_arm(size_t n)
{
    calls = 0;
    fired = 0;
    fired_at = NULL;
    fail_at = n;
    armed = 1;
}

int failalloc_disarm(void)
{
    armed = 0;
    return fired;
}

size_t failalloc_calls(void)
{
    return calls;
}

long failalloc_live(void)
{
    return atomic_load(&live);
}

const char *failalloc_failed_in(void)
{
    Dl_info info;
    if (!fired || dladdr(fired_at, &info) == 0)
        return NULL;
    return info.dli_fname;
}

#endif
