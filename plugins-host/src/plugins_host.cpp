// The plugin hosts (OMPD, DMPL, MQS, MPIR, MPI2DD) arrive with their issues.
namespace ompdbg::plugins {
int plugins_host_anchor = 0;
}
