/* The stdin/stdout loop of the view drivers (line_driver.h). */
#define _POSIX_C_SOURCE 200809L

#include "line_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int line_driver_run(line_driver_answer_fn answer, void *payload)
{
    char line[4096];
    while (fgets(line, sizeof(line), stdin) != NULL) {
        json_t *out;
        char *text = NULL;
        if (strncmp(line, "quit", 4) == 0)
            break;
        if ((out = json_object()) == NULL || answer(out, line, payload) != 0 ||
            (text = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS)) == NULL) {
            json_decref(out);
            return 1;
        }
        printf("%s\n", text);
        fflush(stdout);
        free(text);
        json_decref(out);
    }
    return 0;
}

void line_driver_fast(topo_k8s_opts *ko, long *backoff_base_ms, long *backoff_max_ms)
{
    ko->max_retries = 1;
    ko->backoff_max_ms = 500;
    *backoff_base_ms = 100;
    *backoff_max_ms = 1000;
}
