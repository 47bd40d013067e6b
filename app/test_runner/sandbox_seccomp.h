#pragma once

// The system-call filter of the sandbox, built with libseccomp and handed to bubblewrap
// (--seccomp FD), which installs it just before it runs the command: everything inside runs
// under it. It refuses (EPERM) what generated code never needs and what escapes are made
// of: ptrace and reading other processes' memory, mount and the new mount API, the kernel
// keyring (keyctl, add_key, request_key), bpf, userfaultfd, perf_event_open, loading kernel
// modules and kexec, new user namespaces (unshare, clone and setns with CLONE_NEWUSER), and
// clone3 (ENOSYS: its flags cannot be inspected, so the C library falls back to clone).
#include "engine/common/result.h"

#include <vector>

namespace cw {

// The filter as the BPF program bwrap reads (built once, then kept).
Result<std::vector<char>> sandboxSeccompProgram();

// The system calls the filter refuses, by name (for the documentation and the tests).
std::vector<const char*> sandboxRefusedSyscalls();

} // namespace cw
