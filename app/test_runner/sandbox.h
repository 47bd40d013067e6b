#pragma once

#include "engine/common/result.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cw {

// What generated code may use while it runs. Each is enforced by the kernel (rlimits set
// before bubblewrap starts, inherited by everything inside; a cgroup) or by the runner (wall
// time, output), and each stop is reported in one line.
struct SandboxLimits {
    int cpuSeconds = 20; // RLIMIT_CPU per process: SIGXCPU, then SIGKILL
    std::uint64_t addressSpaceBytes = 4ull << 30; // RLIMIT_AS: allocations fail past it
    // All of a run's processes together, in a cgroup of the run's own (see
    // Sandbox::sharesMemoryLimit): the kernel kills them past it. Where no cgroup can be
    // made, only addressSpaceBytes per process holds, with `processes` processes at most.
    std::uint64_t memoryBytes = 4ull << 30;
    int processes = 64; // RLIMIT_NPROC: tasks the sandbox may add to its user's count
    std::uint64_t fileSizeBytes = 64ull << 20; // RLIMIT_FSIZE: SIGXFSZ past it
    int openFiles = 256; // RLIMIT_NOFILE
    double wallSeconds = 30.0; // then the whole sandbox is killed
    std::size_t outputBytes = 1 << 20; // stdout + stderr kept; more kills the sandbox
};

struct SandboxCommand {
    std::vector<std::string> argv; // argv[0] is a path inside the sandbox (/usr/bin/...)
    std::string workDir; // the only writable folder; mounted at /sandbox, the working folder
    std::vector<std::pair<std::string, std::string>> environment; // besides PATH, HOME, TMPDIR
};

struct SandboxResult {
    int exitCode = -1; // -1 when killed by a signal
    int signal = 0; // the signal that ended it (0: it exited)
    bool timedOut = false; // past SandboxLimits::wallSeconds
    bool outputLimit = false; // printed more than SandboxLimits::outputBytes
    bool memoryLimit = false; // its processes together reached SandboxLimits::memoryBytes
    std::string output; // stdout and stderr interleaved as they came, capped
    double seconds = 0.0;

    bool succeeded() const
    {
        return exitCode == 0 && signal == 0 && !timedOut && !outputLimit && !memoryLimit;
    }
    // Why it stopped when a limit stopped it ("ran past the 30 s wall-time limit"), else "".
    std::string limitMessage(const SandboxLimits& limits) const;
};

// Runs commands confined by bubblewrap: new user, PID, network, IPC, UTS and cgroup
// namespaces (--unshare-all: no network at all), --die-with-parent, --new-session (no
// terminal to inject keystrokes into), /usr and the library links read-only, no /home, no
// /root, none of /etc but alternatives and the loader cache, a private /proc and /dev, and
// the work folder the only writable place; a seccomp filter (sandbox_seccomp.h: no ptrace,
// mount, keyring, bpf, userfaultfd, new user namespaces); a memory limit over all of a run's
// processes (sandbox_memory_group.h) where a cgroup can be made. When the app runs as root
// the sandbox runs as a user of its own, one per app process (root ignores RLIMIT_NPROC).
// Thread-safe; concurrent runs of one process share the process limit.
class Sandbox {
public:
    // Finds bwrap (on PATH or in /usr/bin) and checks that it can make its namespaces here
    // (some kernels and container runtimes forbid user namespaces). The error says why and
    // what to install; no code is ever run unconfined. `bwrapPath` names the program
    // instead of searching for it.
    static Result<Sandbox> create(SandboxLimits limits = {}, const std::string& bwrapPath = {});

    const SandboxLimits& limits() const { return m_limits; }
    const std::string& bwrapPath() const { return m_bwrap; }
    // Whether memoryBytes holds for all of a run's processes together (a cgroup per run), or
    // only addressSpaceBytes per process; memoryNote() says which, and why not.
    bool sharesMemoryLimit() const { return m_sharedMemory; }
    const std::string& memoryNote() const { return m_memoryNote; }

    // Runs the command and waits for it, polling `cancelled` (true kills it) every 50 ms.
    // Errors: the work folder is missing, the process could not be started.
    Result<SandboxResult> run(
        const SandboxCommand& command, const std::function<bool()>& cancelled = {}) const;
    // The same with other limits (a build may take longer than a test run).
    Result<SandboxResult> run(const SandboxCommand& command, const SandboxLimits& limits,
        const std::function<bool()>& cancelled = {}) const;

    // Makes a folder (and what is in it) usable by the sandbox's user: when running as root,
    // hands it to the sandbox's own user.
    static Result<void> prepareWorkDir(const std::string& path);

private:
    Sandbox(std::string bwrap, SandboxLimits limits);
    std::vector<std::string> bwrapArguments(const SandboxCommand& command, int seccompFd) const;

    std::string m_bwrap;
    SandboxLimits m_limits;
    std::vector<char> m_seccomp; // the BPF program bwrap installs
    bool m_sharedMemory = false;
    std::string m_memoryNote;
};

} // namespace cw
