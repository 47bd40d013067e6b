#pragma once

// A memory limit over all the processes of one sandboxed run together: a cgroup of its own
// (cgroup v2 where the memory controller is delegated to us: the app then moves itself into a
// leaf of its own cgroup so that the runs' groups can sit beside it; else the cgroup v1 memory
// hierarchy where it is writable, as it is for root in most containers). RLIMIT_AS only
// bounds each process, so without a cgroup 64 processes could use 64 times the limit.
#include <cstdint>
#include <memory>
#include <string>

namespace cw {

class SandboxMemoryGroup {
public:
    // The cgroup for one run, limited to `bytes` (swap included where the kernel counts it),
    // or null where none can be made; `why` then says why ("no writable cgroup memory
    // controller: ..."). Thread-safe: each call makes a group of its own.
    static std::unique_ptr<SandboxMemoryGroup> create(std::uint64_t bytes, std::string& why);
    ~SandboxMemoryGroup(); // kills what is left in it and removes it

    SandboxMemoryGroup(const SandboxMemoryGroup&) = delete;
    SandboxMemoryGroup& operator=(const SandboxMemoryGroup&) = delete;

    // An open descriptor of its cgroup.procs: a forked child writes "0" to it to join
    // (write(2) is async-signal-safe), so it is inside before it runs anything.
    int joinDescriptor() const { return m_procs; }
    // Whether the kernel killed a process of the group for reaching the limit.
    bool hitLimit() const;
    // "cgroup v1" or "cgroup v2".
    const std::string& kind() const { return m_kind; }

private:
    SandboxMemoryGroup(std::string dir, std::string kind, int procs);
    void killAll() const;

    std::string m_dir;
    std::string m_kind;
    int m_procs = -1;
};

} // namespace cw
