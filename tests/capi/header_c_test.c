/* The public header compiles as C99 and its defaults hold when used from C. */
#include "warpforge/warpforge.h"

int capi_test_from_c(void) {
  wf_session_options options;
  wf_session* session = NULL;
  wf_status status;
  wf_session_options_init(&options);
  if (options.allow_tf32 != 0 || options.allow_cpu_fallback != 0 || options.threads != 0) return 1;
  status = wf_session_open(NULL, &options, &session);
  if (status != WF_INVALID_ARGUMENT || session != NULL) return 2;
  if (wf_last_error_code() != WF_INVALID_ARGUMENT || wf_last_error_message()[0] == '\0') return 3;
  return 0;
}
