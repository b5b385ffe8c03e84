/*
 * Gives memory the C allocator holds free back to the system (glibc's malloc_trim).
 *
 * The search index is built of many typed arrays that grow by copying; glibc keeps most of what
 * they free inside its heap, where it stays resident until malloc_trim, which Node does not
 * offer. Elsewhere (musl, macOS) this does nothing and says so.
 *
 * trim() runs it on the calling thread; trimInBackground() on libuv's thread pool, resolving its
 * promise with the same answer: after a rebuilt index takes over, glibc walks every page the old
 * one freed, which held the event loop for 185 ms at a million documents.
 */
#include <node_api.h>
#include <stdlib.h>
#if defined(__linux__)
#include <malloc.h>
#endif

static int TrimNow(void) {
#if defined(__GLIBC__)
  return malloc_trim(0);
#else
  return 0;
#endif
}

static napi_value Trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result;
  napi_get_boolean(env, TrimNow() != 0, &result);
  return result;
}

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  int released;
} BackgroundTrim;

static void ExecuteTrim(napi_env env, void *data) {
  (void)env;
  ((BackgroundTrim *)data)->released = TrimNow();
}

static void CompleteTrim(napi_env env, napi_status status, void *data) {
  BackgroundTrim *trim = (BackgroundTrim *)data;
  napi_value result;
  napi_get_boolean(env, status == napi_ok && trim->released != 0, &result);
  napi_resolve_deferred(env, trim->deferred, result);
  napi_delete_async_work(env, trim->work);
  free(trim);
}

static napi_value TrimInBackground(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value promise, name;
  BackgroundTrim *trim = (BackgroundTrim *)calloc(1, sizeof(BackgroundTrim));
  if (trim == NULL) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  napi_create_promise(env, &trim->deferred, &promise);
  napi_create_string_utf8(env, "malloc_trim", NAPI_AUTO_LENGTH, &name);
  napi_create_async_work(env, NULL, name, ExecuteTrim, CompleteTrim, trim, &trim->work);
  napi_queue_async_work(env, trim->work);
  return promise;
}

NAPI_MODULE_INIT() {
  napi_value trim, trimInBackground;
  napi_create_function(env, "trim", NAPI_AUTO_LENGTH, Trim, NULL, &trim);
  napi_set_named_property(env, exports, "trim", trim);
  napi_create_function(env, "trimInBackground", NAPI_AUTO_LENGTH, TrimInBackground, NULL, &trimInBackground);
  napi_set_named_property(env, exports, "trimInBackground", trimInBackground);
  return exports;
}
