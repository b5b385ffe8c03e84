/*
 * Gives memory the C allocator holds free back to the system (glibc's malloc_trim).
 *
 * The search index is built of many typed arrays that grow by copying; glibc keeps most of what
 * they free inside its heap, where it stays resident until malloc_trim, which Node does not
 * offer. Elsewhere (musl, macOS) this does nothing and says so.
 */
#include <node_api.h>
#if defined(__linux__)
#include <malloc.h>
#endif

static napi_value Trim(napi_env env, napi_callback_info info) {
  (void)info;
  int released = 0;
#if defined(__GLIBC__)
  released = malloc_trim(0);
#endif
  napi_value result;
  napi_get_boolean(env, released != 0, &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value trim;
  napi_create_function(env, "trim", NAPI_AUTO_LENGTH, Trim, NULL, &trim);
  napi_set_named_property(env, exports, "trim", trim);
  return exports;
}
