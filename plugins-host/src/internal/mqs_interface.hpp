#pragma once
// The message-queue DLL interface ("Tools and Debugging Interfaces to MPI", the mqs_* API),
// written from the MPI Forum draft with the layout the shipped DLLs use: the basic callback
// table carries mqs_dprints_fp after mqs_free_fp, and mqs_target_type_sizes ends with
// bool_size and size_t_size (Open MPI's and MPICH's msgq_interface.h, interface version 2).
// Only the debugger side lives here: our code never includes an MPI implementation's header.

#include <cstddef>

extern "C" {

// The debugger's opaque objects, as the DLL sees them; the definitions are ours
// (msgq_contexts.hpp).
typedef struct mqs_image_ mqs_image;
typedef struct mqs_process_ mqs_process;
typedef struct mqs_type_ mqs_type;
// The DLL's opaque objects, stored by the debugger on its behalf.
typedef struct _mqs_image_info mqs_image_info;
typedef struct _mqs_process_info mqs_process_info;

typedef unsigned long mqs_taddr_t;  // a target address
typedef long mqs_tword_t;           // a target word

typedef struct {
    int short_size;
    int int_size;
    int long_size;
    int long_long_size;
    int pointer_size;
    int bool_size;
    int size_t_size;
} mqs_target_type_sizes;

enum { mqs_ok = 0, mqs_no_information, mqs_end_of_list, mqs_first_user_code = 100 };

typedef enum { mqs_lang_c = 'c', mqs_lang_cplus = 'C', mqs_lang_f77 = 'f', mqs_lang_f90 = 'F' } mqs_lang_code;

typedef enum { mqs_pending_sends, mqs_pending_receives, mqs_unexpected_messages } mqs_op_class;

enum { MQS_INVALID_PROCESS = -1 };

enum mqs_status { mqs_st_pending, mqs_st_matched, mqs_st_complete };

typedef struct {
    mqs_taddr_t unique_id;
    mqs_tword_t local_rank;
    mqs_tword_t size;
    char name[64];
} mqs_communicator;

typedef struct {
    int status;  // enum mqs_status
    mqs_tword_t desired_local_rank;
    mqs_tword_t desired_global_rank;
    int tag_wild;
    mqs_tword_t desired_tag;
    mqs_tword_t desired_length;
    int system_buffer;
    mqs_taddr_t buffer;
    mqs_tword_t actual_local_rank;
    mqs_tword_t actual_global_rank;
    mqs_tword_t actual_tag;
    mqs_tword_t actual_length;
    char extra_text[5][64];
} mqs_pending_operation;

// Callbacks the debugger provides.
typedef void* (*mqs_malloc_ft)(size_t);
typedef void (*mqs_free_ft)(void*);
typedef void (*mqs_dprints_ft)(const char*);
typedef char* (*mqs_errorstring_ft)(int);
typedef void (*mqs_put_image_info_ft)(mqs_image*, mqs_image_info*);
typedef mqs_image_info* (*mqs_get_image_info_ft)(mqs_image*);
typedef void (*mqs_put_process_info_ft)(mqs_process*, mqs_process_info*);
typedef mqs_process_info* (*mqs_get_process_info_ft)(mqs_process*);

typedef void (*mqs_get_type_sizes_ft)(mqs_process*, mqs_target_type_sizes*);
typedef int (*mqs_find_function_ft)(mqs_image*, char*, mqs_lang_code, mqs_taddr_t*);
typedef int (*mqs_find_symbol_ft)(mqs_image*, char*, mqs_taddr_t*);
typedef mqs_type* (*mqs_find_type_ft)(mqs_image*, char*, mqs_lang_code);
typedef int (*mqs_field_offset_ft)(mqs_type*, char*);
typedef int (*mqs_sizeof_ft)(mqs_type*);

typedef int (*mqs_get_global_rank_ft)(mqs_process*);
typedef mqs_image* (*mqs_get_image_ft)(mqs_process*);
typedef int (*mqs_fetch_data_ft)(mqs_process*, mqs_taddr_t, int, void*);
typedef void (*mqs_target_to_host_ft)(mqs_process*, const void*, void*, int);

typedef struct mqs_basic_callbacks {
    mqs_malloc_ft mqs_malloc_fp;
    mqs_free_ft mqs_free_fp;
    mqs_dprints_ft mqs_dprints_fp;
    mqs_errorstring_ft mqs_errorstring_fp;
    mqs_put_image_info_ft mqs_put_image_info_fp;
    mqs_get_image_info_ft mqs_get_image_info_fp;
    mqs_put_process_info_ft mqs_put_process_info_fp;
    mqs_get_process_info_ft mqs_get_process_info_fp;
} mqs_basic_callbacks;

typedef struct mqs_image_callbacks {
    mqs_get_type_sizes_ft mqs_get_type_sizes_fp;
    mqs_find_function_ft mqs_find_function_fp;
    mqs_find_symbol_ft mqs_find_symbol_fp;
    mqs_find_type_ft mqs_find_type_fp;
    mqs_field_offset_ft mqs_field_offset_fp;
    mqs_sizeof_ft mqs_sizeof_fp;
} mqs_image_callbacks;

typedef struct mqs_process_callbacks {
    mqs_get_global_rank_ft mqs_get_global_rank_fp;
    mqs_get_image_ft mqs_get_image_fp;
    mqs_fetch_data_ft mqs_fetch_data_fp;
    mqs_target_to_host_ft mqs_target_to_host_fp;
} mqs_process_callbacks;

// Entry points of the DLL (declarations only, for their types; resolved with dlsym).
void mqs_setup_basic_callbacks(const mqs_basic_callbacks*);
char* mqs_version_string(void);
int mqs_version_compatibility(void);
int mqs_dll_taddr_width(void);
char* mqs_dll_error_string(int);
int mqs_setup_image(mqs_image*, const mqs_image_callbacks*);
int mqs_image_has_queues(mqs_image*, char**);
void mqs_destroy_image_info(mqs_image_info*);
int mqs_setup_process(mqs_process*, const mqs_process_callbacks*);
void mqs_destroy_process_info(mqs_process_info*);
int mqs_process_has_queues(mqs_process*, char**);
int mqs_update_communicator_list(mqs_process*);
int mqs_setup_communicator_iterator(mqs_process*);
int mqs_get_communicator(mqs_process*, mqs_communicator*);
int mqs_get_comm_group(mqs_process*, int*);
int mqs_next_communicator(mqs_process*);
int mqs_setup_operation_iterator(mqs_process*, int);
int mqs_next_operation(mqs_process*, mqs_pending_operation*);

}  // extern "C"
