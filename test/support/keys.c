/* test/support/keys.h */
#include "support/keys.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

topo_keyring test_keyring(const char *material)
{
    topo_keyring ring = TOPO_KEYRING_INIT;
    topo_err err = TOPO_ERR_INIT;
    if (topo_keyring_add(&ring, material, strlen(material), "test key", &err) < 0)
        fail_msg("%s", err.text);
    return ring;
}
