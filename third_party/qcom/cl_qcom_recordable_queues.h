/*
 * Declarations for Qualcomm's cl_qcom_recordable_queues OpenCL extension,
 * written for recq from the public facts listed in DESIGN.md ("Facts about
 * cl_qcom_recordable_queues"). Not copied from any vendor header.
 *
 * Lifecycle: create a queue with CL_QUEUE_RECORDABLE_QCOM; clNewRecordingQCOM
 * on it; every clEnqueueNDRangeKernel on that queue is then recorded, not run;
 * clEndRecordingQCOM; then clEnqueueRecordingQCOM replays the recording on an
 * ordinary queue, optionally substituting kernel arguments, global offsets and
 * global/local sizes per dispatch (dispatch_index = zero-based position of the
 * enqueue inside the recording).
 *
 * The entry points are not exported symbols: fetch them with
 * clGetExtensionFunctionAddressForPlatform using the names below.
 */
#ifndef RECQ_THIRD_PARTY_QCOM_CL_QCOM_RECORDABLE_QUEUES_H_
#define RECQ_THIRD_PARTY_QCOM_CL_QCOM_RECORDABLE_QUEUES_H_

#include <CL/cl.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CL_QCOM_RECORDABLE_QUEUES_EXTENSION_NAME "cl_qcom_recordable_queues"

/* cl_command_queue_properties bit. */
#define CL_QUEUE_RECORDABLE_QCOM (1u << 30)

/* cl_device_info: the most dispatches one recording may hold (cl_uint). */
#define CL_DEVICE_RECORDABLE_QUEUE_MAX_SIZE 0x41DE

typedef struct _cl_recording_qcom* cl_recording_qcom;

/* Replaces argument arg_index of dispatch dispatch_index for one replay.
 * arg_size/arg_value follow clSetKernelArg: a cl_mem argument passes a
 * pointer to the cl_mem. */
typedef struct _cl_array_arg_qcom {
  cl_uint dispatch_index;
  cl_uint arg_index;
  size_t arg_size;
  const void* arg_value;
} cl_array_arg_qcom;

/* Replaces the global work offset of dispatch dispatch_index. */
typedef struct _cl_offset_qcom {
  cl_uint dispatch_index;
  size_t offsets[3];
} cl_offset_qcom;

/* Replaces the global or local work size of dispatch dispatch_index;
 * workgroup_size points at work_dim values. */
typedef struct _cl_workgroup_qcom {
  cl_uint dispatch_index;
  const size_t* workgroup_size;
} cl_workgroup_qcom;

/* clSetKernelExecInfo for one dispatch (SVM variant only). param_name is a
 * cl_kernel_exec_info, which cl.h only declares for OpenCL 2.0 targets; it is
 * a cl_uint either way. */
typedef struct _cl_array_kernel_exec_info_qcom {
  cl_uint dispatch_index;
#ifdef CL_VERSION_2_0
  cl_kernel_exec_info param_name;
#else
  cl_uint param_name;
#endif
  size_t param_value_size;
  const void* param_value;
} cl_array_kernel_exec_info_qcom;

typedef cl_recording_qcom(CL_API_CALL* clNewRecordingQCOM_fn)(cl_command_queue command_queue,
                                                              cl_int* errcode_ret);

typedef cl_int(CL_API_CALL* clEndRecordingQCOM_fn)(cl_recording_qcom recording);

typedef cl_int(CL_API_CALL* clRetainRecordingQCOM_fn)(cl_recording_qcom recording);

typedef cl_int(CL_API_CALL* clReleaseRecordingQCOM_fn)(cl_recording_qcom recording);

typedef cl_int(CL_API_CALL* clEnqueueRecordingQCOM_fn)(
    cl_command_queue command_queue, cl_recording_qcom recording, size_t num_args,
    const cl_array_arg_qcom* arg_array, size_t num_global_offsets,
    const cl_offset_qcom* global_offset_array, size_t num_global_workgroups,
    const cl_workgroup_qcom* global_workgroup_array, size_t num_local_workgroups,
    const cl_workgroup_qcom* local_workgroup_array, cl_uint num_events_in_wait_list,
    const cl_event* event_wait_list, cl_event* event);

/* As clEnqueueRecordingQCOM; svm_arg_array entries carry an SVM pointer in
 * arg_value (as clSetKernelArgSVMPointer), non_arg_obj_array entries are
 * applied with clSetKernelExecInfo. */
typedef cl_int(CL_API_CALL* clEnqueueRecordingSVMQCOM_fn)(
    cl_command_queue command_queue, cl_recording_qcom recording, size_t num_args,
    const cl_array_arg_qcom* arg_array, size_t num_svm_args, const cl_array_arg_qcom* svm_arg_array,
    size_t num_global_offsets, const cl_offset_qcom* global_offset_array,
    size_t num_global_workgroups, const cl_workgroup_qcom* global_workgroup_array,
    size_t num_local_workgroups, const cl_workgroup_qcom* local_workgroup_array,
    size_t num_non_arg_objs, const cl_array_kernel_exec_info_qcom* non_arg_obj_array,
    cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RECQ_THIRD_PARTY_QCOM_CL_QCOM_RECORDABLE_QUEUES_H_ */
