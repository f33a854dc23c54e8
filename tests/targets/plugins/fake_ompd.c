/* A fake libompd, only to provoke what the real one cannot: an unsupported API version
 * (FAKE_API_VERSION), a missing entry point (FAKE_OMIT_ICV_STRING), or with a supported
 * version an error from ompd_initialize. Every other entry point answers
 * ompd_rc_unsupported (5). */
#include <stdint.h>

#define STUB(name) \
    int name(void) { return 5; }

int ompd_get_api_version(int64_t* version) {
    *version = FAKE_API_VERSION;
    return 0;
}
int ompd_get_version_string(const char** s) {
    *s = "fake OMPD";
    return 0;
}
STUB(ompd_initialize)
STUB(ompd_finalize)
STUB(ompd_process_initialize)
STUB(ompd_device_initialize)
STUB(ompd_rel_address_space_handle)
STUB(ompd_get_omp_version)
STUB(ompd_get_omp_version_string)
STUB(ompd_get_thread_in_parallel)
STUB(ompd_get_thread_handle)
STUB(ompd_rel_thread_handle)
STUB(ompd_thread_handle_compare)
STUB(ompd_get_thread_id)
STUB(ompd_get_curr_parallel_handle)
STUB(ompd_get_enclosing_parallel_handle)
STUB(ompd_get_task_parallel_handle)
STUB(ompd_rel_parallel_handle)
STUB(ompd_parallel_handle_compare)
STUB(ompd_get_curr_task_handle)
STUB(ompd_get_generating_task_handle)
STUB(ompd_get_scheduling_task_handle)
STUB(ompd_get_task_in_parallel)
STUB(ompd_rel_task_handle)
STUB(ompd_task_handle_compare)
STUB(ompd_get_task_function)
STUB(ompd_get_task_frame)
STUB(ompd_enumerate_states)
STUB(ompd_get_state)
STUB(ompd_get_display_control_vars)
STUB(ompd_rel_display_control_vars)
STUB(ompd_enumerate_icvs)
STUB(ompd_get_icv_from_scope)
#ifndef FAKE_OMIT_ICV_STRING
STUB(ompd_get_icv_string_from_scope)
#endif
STUB(ompd_get_tool_data)
