/* Record keys for tests (include/topo/keyring.h): a ring of one key made
 * from a string, as replicas sharing a Secret file would hold it. */
#ifndef TOPO_TEST_KEYS_H
#define TOPO_TEST_KEYS_H

#include "topo/keyring.h"

/* A ring holding the one key `material` (its bytes without the NUL; at
 * least TOPO_KEYRING_KEY_MIN of them). Fails the running cmocka test when
 * the key is refused. */
topo_keyring test_keyring(const char *material);

#endif
