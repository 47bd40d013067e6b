#include "app/test_runner/sandbox.h"

#include "app/test_runner/sandbox_memory_group.h"
#include "app/test_runner/sandbox_seccomp.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <grp.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace cw {

namespace {

// When the app runs as root, the sandbox runs as a user of its own (no account, no other
// processes): RLIMIT_NPROC counts every task of a user, so a shared user such as "nobody"
// would let unrelated processes use up the limit (the kernel then refuses the exec).
// One per app process, so that concurrent test programs never share a count.
uid_t sandboxUser()
{
    static const uid_t uid = uid_t(0x40000000u + (std::uint32_t(::getpid()) & 0x3fffffffu));
    return uid;
}

// Tasks (threads included, as RLIMIT_NPROC counts them) whose real user is `uid`.
long tasksOfUser(uid_t uid)
{
    long tasks = 0;
    std::error_code error;
    for (auto it = std::filesystem::directory_iterator("/proc", error);
         !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
        const std::string name = it->path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream status(it->path() / "status");
        std::string line;
        bool mine = false;
        while (std::getline(status, line)) {
            if (line.rfind("Uid:", 0) == 0)
                mine = std::strtoul(line.c_str() + 4, nullptr, 10) == uid;
            else if (line.rfind("Threads:", 0) == 0 && mine)
                tasks += std::strtol(line.c_str() + 8, nullptr, 10);
        }
    }
    return tasks;
}

std::string findBwrap()
{
    if (const char* path = std::getenv("PATH")) {
        std::string all = path;
        std::size_t start = 0;
        while (start <= all.size()) {
            const std::size_t end = std::min(all.find(':', start), all.size());
            const std::string candidate = all.substr(start, end - start) + "/bwrap";
            if (end > start && ::access(candidate.c_str(), X_OK) == 0)
                return candidate;
            start = end + 1;
        }
    }
    return ::access("/usr/bin/bwrap", X_OK) == 0 ? "/usr/bin/bwrap" : std::string();
}

void setLimit(int resource, rlim_t value, rlim_t hard = 0)
{
    const rlimit limit { value, hard ? hard : value };
    ::setrlimit(resource, &limit);
}

std::string signalName(int signal)
{
    switch (signal) {
    case SIGKILL:
        return "SIGKILL";
    case SIGXCPU:
        return "SIGXCPU";
    case SIGXFSZ:
        return "SIGXFSZ";
    case SIGSEGV:
        return "SIGSEGV";
    case SIGABRT:
        return "SIGABRT";
    default:
        return "signal " + std::to_string(signal);
    }
}

std::string mib(std::uint64_t bytes)
{
    return std::to_string(bytes >> 20) + " MiB";
}

} // namespace

std::string SandboxResult::limitMessage(const SandboxLimits& limits) const
{
    if (timedOut)
        return "stopped: ran past the " + std::to_string(int(limits.wallSeconds))
            + " s wall-time limit";
    if (outputLimit)
        return "stopped: printed more than " + mib(limits.outputBytes) + " of output";
    if (memoryLimit)
        return "stopped: its processes together used more than the " + mib(limits.memoryBytes)
            + " memory limit";
    if (signal == SIGXCPU)
        return "stopped: used its " + std::to_string(limits.cpuSeconds) + " s of CPU time";
    if (signal == SIGXFSZ)
        return "stopped: wrote a file larger than " + mib(limits.fileSizeBytes);
    if (signal != 0)
        return "killed by " + signalName(signal);
    return {};
}

Sandbox::Sandbox(std::string bwrap, SandboxLimits limits)
    : m_bwrap(std::move(bwrap))
    , m_limits(limits)
{
}

Result<Sandbox> Sandbox::create(SandboxLimits limits, const std::string& bwrapPath)
{
    const std::string bwrap = bwrapPath.empty() ? findBwrap() : bwrapPath;
    if (bwrap.empty() || ::access(bwrap.c_str(), X_OK) != 0)
        return makeError("bubblewrap (bwrap) is not installed, so generated tests cannot be "
                         "run safely and will not be run (install it: apt install bubblewrap)");
    Sandbox sandbox(bwrap, limits);
    auto program = sandboxSeccompProgram();
    if (!program)
        return makeError(program.error().message
            + ", so generated tests cannot be run safely and will not be run");
    sandbox.m_seccomp = *program;
    std::string why;
    sandbox.m_sharedMemory = SandboxMemoryGroup::create(limits.memoryBytes, why) != nullptr;
    sandbox.m_memoryNote = sandbox.m_sharedMemory
        ? mib(limits.memoryBytes) + " for all of a run's processes together (a cgroup per run)"
        : mib(limits.addressSpaceBytes) + " per process, " + std::to_string(limits.processes)
            + " processes at most (" + why + ")";
    char pattern[] = "/tmp/cw-sandbox-probe-XXXXXX";
    if (!::mkdtemp(pattern))
        return makeError(std::string("cannot make a temporary folder: ") + std::strerror(errno));
    const std::string dir = pattern;
    Result<SandboxResult> probe = Error {};
    if (auto prepared = prepareWorkDir(dir); !prepared)
        probe = prepared.error();
    else
        probe = sandbox.run({ { "/usr/bin/true" }, dir, {} });
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    if (!probe)
        return probe.error();
    if (!probe->succeeded())
        return makeError("bubblewrap cannot make its sandbox on this machine, so generated tests "
                         "will not be run (user namespaces may be disabled): "
            + probe->output.substr(0, 400));
    return sandbox;
}

Result<void> Sandbox::prepareWorkDir(const std::string& path)
{
    if (::geteuid() != 0)
        return {};
    std::error_code error;
    auto hand = [&](const std::filesystem::path& p) -> bool {
        return ::lchown(p.c_str(), sandboxUser(), sandboxUser()) == 0;
    };
    if (!hand(path))
        return makeError(
            path + ": cannot hand the folder to the sandbox user: " + std::strerror(errno));
    for (auto it = std::filesystem::recursive_directory_iterator(path, error);
         !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
        if (!hand(it->path()))
            return makeError(it->path().string() + ": cannot hand it to the sandbox user");
    }
    return {};
}

std::vector<std::string> Sandbox::bwrapArguments(const SandboxCommand& command, int seccompFd) const
{
    std::vector<std::string> args
        = { m_bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
              "--seccomp", std::to_string(seccompFd), "--ro-bind", "/usr", "/usr" };
    // Debian's merged /usr: /bin, /lib ... are links into /usr; older layouts are folders.
    for (const char* top : { "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32" }) {
        std::error_code error;
        const auto status = std::filesystem::symlink_status(top, error);
        if (error || !std::filesystem::exists(status))
            continue;
        if (std::filesystem::is_symlink(status)) {
            args.insert(args.end(),
                { "--symlink", std::filesystem::read_symlink(top, error).string(), top });
        } else {
            args.insert(args.end(), { "--ro-bind", top, top });
        }
    }
    args.insert(args.end(),
        { "--ro-bind-try", "/etc/alternatives", "/etc/alternatives", "--ro-bind-try",
            "/etc/ld.so.cache", "/etc/ld.so.cache", "--proc", "/proc", "--dev", "/dev", "--bind",
            command.workDir, "/sandbox", "--chdir", "/sandbox", "--clearenv", "--setenv", "PATH",
            "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/sandbox", "--setenv", "TMPDIR",
            "/sandbox/.tmp", "--setenv", "LANG", "C.UTF-8" });
    for (const auto& [name, value] : command.environment)
        args.insert(args.end(), { "--setenv", name, value });
    args.push_back("--");
    args.insert(args.end(), command.argv.begin(), command.argv.end());
    return args;
}

Result<SandboxResult> Sandbox::run(
    const SandboxCommand& command, const std::function<bool()>& cancelled) const
{
    return run(command, m_limits, cancelled);
}

Result<SandboxResult> Sandbox::run(const SandboxCommand& command, const SandboxLimits& limits,
    const std::function<bool()>& cancelled) const
{
    if (command.argv.empty())
        return makeError("sandbox: nothing to run");
    if (!std::filesystem::is_directory(command.workDir))
        return makeError(command.workDir + ": the sandbox's work folder does not exist");
    // The temporary folder inside the work folder (Go refuses a go.mod in the temp root).
    const std::string tmp = command.workDir + "/.tmp";
    if (::mkdir(tmp.c_str(), 0700) == 0 && ::geteuid() == 0)
        ::lchown(tmp.c_str(), sandboxUser(), sandboxUser());
    // The filter for bwrap to read, in a file of its own that only the child inherits.
    const int seccompFd = ::memfd_create("cw-seccomp", MFD_CLOEXEC);
    if (seccompFd < 0)
        return makeError(std::string("sandbox: memfd_create: ") + std::strerror(errno));
    if (::write(seccompFd, m_seccomp.data(), m_seccomp.size()) != ssize_t(m_seccomp.size())
        || ::lseek(seccompFd, 0, SEEK_SET) != 0) {
        ::close(seccompFd);
        return makeError(
            std::string("sandbox: cannot write the seccomp filter: ") + std::strerror(errno));
    }
    std::string memoryWhy;
    const std::unique_ptr<SandboxMemoryGroup> memory
        = m_sharedMemory ? SandboxMemoryGroup::create(limits.memoryBytes, memoryWhy) : nullptr;
    if (m_sharedMemory && !memory) {
        ::close(seccompFd);
        return makeError("sandbox: cannot make the run's memory cgroup: " + memoryWhy);
    }
    const int joinFd = memory ? memory->joinDescriptor() : -1;
    const std::vector<std::string> args = bwrapArguments(command, seccompFd);
    std::vector<char*> argv;
    for (const std::string& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);

    int pipeFds[2];
    if (::pipe2(pipeFds, O_CLOEXEC) != 0) {
        ::close(seccompFd);
        return makeError(std::string("sandbox: pipe: ") + std::strerror(errno));
    }
    const bool root = ::geteuid() == 0;
    // A user's own processes count against RLIMIT_NPROC too, so an unprivileged run may
    // start `processes` more than the user already has; the sandbox user of a root run has
    // none.
    const rlim_t processLimit
        = rlim_t(limits.processes) + (root ? 0 : rlim_t(tasksOfUser(::getuid())));
    const uid_t user = sandboxUser();
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(pipeFds[0]);
        ::close(pipeFds[1]);
        ::close(seccompFd);
        return makeError(std::string("sandbox: fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
        // The child: only async-signal-safe calls until exec.
        const int devNull = ::open("/dev/null", O_RDONLY);
        ::dup2(devNull, 0);
        ::dup2(pipeFds[1], 1);
        ::dup2(pipeFds[1], 2);
        ::setpgid(0, 0);
        // Into the run's memory cgroup before anything runs, and the filter kept open for
        // bwrap across exec.
        if (joinFd >= 0 && ::write(joinFd, "0", 1) != 1)
            ::_exit(125);
        ::fcntl(seccompFd, F_SETFD, 0);
        // SIGXCPU at the soft limit (reported as such); SIGKILL a second later if ignored.
        setLimit(RLIMIT_CPU, rlim_t(limits.cpuSeconds), rlim_t(limits.cpuSeconds) + 1);
        setLimit(RLIMIT_AS, rlim_t(limits.addressSpaceBytes));
        setLimit(RLIMIT_NPROC, processLimit);
        setLimit(RLIMIT_FSIZE, rlim_t(limits.fileSizeBytes));
        setLimit(RLIMIT_NOFILE, rlim_t(limits.openFiles));
        setLimit(RLIMIT_CORE, 0);
        if (root) {
            if (::setgroups(0, nullptr) != 0 || ::setgid(user) != 0 || ::setuid(user) != 0)
                ::_exit(126);
        }
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(pipeFds[1]);
    ::close(seccompFd);
    ::fcntl(pipeFds[0], F_SETFL, O_NONBLOCK);

    SandboxResult result;
    bool killed = false;
    auto killAll = [&] {
        if (!killed) {
            ::kill(-pid, SIGKILL); // bwrap's process group; --die-with-parent takes the rest
            ::kill(pid, SIGKILL);
            killed = true;
        }
    };
    char buffer[65536];
    bool open = true;
    while (open) {
        const double elapsed
            = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (elapsed > limits.wallSeconds) {
            result.timedOut = true;
            killAll();
            break;
        }
        if (cancelled && cancelled()) {
            killAll();
            break;
        }
        pollfd fd { pipeFds[0], POLLIN, 0 };
        const int ready = ::poll(&fd, 1, 50);
        if (ready < 0 && errno != EINTR)
            break;
        if (ready <= 0)
            continue;
        while (true) {
            const ssize_t n = ::read(pipeFds[0], buffer, sizeof buffer);
            if (n > 0) {
                const std::size_t room
                    = limits.outputBytes - std::min(limits.outputBytes, result.output.size());
                result.output.append(buffer, std::min(std::size_t(n), room));
                if (std::size_t(n) > room) {
                    result.outputLimit = true;
                    killAll();
                    open = false;
                    break;
                }
                continue;
            }
            if (n == 0)
                open = false; // every writer has exited
            break;
        }
    }
    ::close(pipeFds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
    result.seconds
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (WIFEXITED(status)) {
        result.exitCode = WEXITSTATUS(status);
        // bwrap reports its child's death by a signal as exit status 128 + signal.
        if (result.exitCode > 128 && result.exitCode < 128 + 65) {
            result.signal = result.exitCode - 128;
            result.exitCode = -1;
        }
    } else if (WIFSIGNALED(status)) {
        result.signal = WTERMSIG(status);
    }
    // The kernel's OOM kill inside the group: SIGKILL of the command (bwrap reports 137).
    result.memoryLimit = memory && memory->hitLimit() && !result.timedOut && !result.outputLimit;
    if (result.exitCode == 125 && memory)
        return makeError("sandbox: could not join the run's memory cgroup");
    if (result.exitCode == 126 && root)
        return makeError("sandbox: could not switch to the sandbox's own user");
    if (result.exitCode == 127 && result.output.empty())
        return makeError("sandbox: could not start " + m_bwrap);
    return result;
}

} // namespace cw
