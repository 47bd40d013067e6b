#include "app/test_runner/sandbox_memory_group.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace cw {
namespace {

std::string readText(const std::string& path)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

bool writeText(const std::string& path, const std::string& text)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    const bool ok = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
    ::close(fd);
    return ok;
}

// The value after `key` in a "key value" per line file (memory.events, memory.oom_control).
long long keyedValue(const std::string& text, const std::string& key)
{
    std::istringstream lines(text);
    std::string name;
    long long value = 0;
    while (lines >> name >> value) {
        if (name == key)
            return value;
    }
    return 0;
}

// Where this process's cgroup is in the hierarchy that has `controller` ("" for v2), found
// from /proc/self/cgroup and /proc/self/mountinfo.
std::string ownCgroupDir(bool v2)
{
    std::ifstream cgroups("/proc/self/cgroup");
    std::string line, path;
    while (std::getline(cgroups, line)) {
        const auto first = line.find(':');
        const auto second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos)
            continue;
        const std::string controllers = line.substr(first + 1, second - first - 1);
        const bool match = v2 ? line.compare(0, first, "0") == 0 && controllers.empty()
                              : ("," + controllers + ",").find(",memory,") != std::string::npos;
        if (match) {
            path = line.substr(second + 1);
            break;
        }
    }
    if (path.empty())
        return {};
    std::ifstream mounts("/proc/self/mountinfo");
    while (std::getline(mounts, line)) {
        // "... mountpoint options - fstype source superoptions"
        const auto dash = line.find(" - ");
        if (dash == std::string::npos)
            continue;
        std::istringstream before(line.substr(0, dash)), after(line.substr(dash + 3));
        std::string id, parent, device, root, mountPoint, type, source, options;
        before >> id >> parent >> device >> root >> mountPoint;
        after >> type >> source >> options;
        const bool fits = v2
            ? type == "cgroup2"
            : type == "cgroup" && ("," + options + ",").find(",memory,") != std::string::npos;
        if (!fits)
            continue;
        // The mount shows the hierarchy from `root` down (a container sees its own part).
        if (path.compare(0, root.size(), root) != 0)
            continue;
        return mountPoint + (root == "/" ? path : path.substr(root.size()));
    }
    return {};
}

bool listsMemory(const std::string& controllers)
{
    std::istringstream words(controllers);
    std::string word;
    while (words >> word) {
        if (word == "memory")
            return true;
    }
    return false;
}

// cgroup v2 allows controllers for a group's children only where the group itself holds no
// process ("no internal processes"), so a desktop session's own cgroup (a delegated scope
// such as app-clausewright-1234.scope, owned by the user) never has memory in its
// subtree_control while the app runs in it. Where this process is alone in its cgroup and
// may write it, it moves into a leaf of its own ("cw-app") and enables the memory
// controller for that leaf's siblings, the runs' groups. Anything else (another process
// beside it, as in a terminal's scope; a group it does not own; no memory controller
// offered) leaves everything as it was and returns false.
bool enableMemoryForSiblingsOfALeaf(const std::string& own)
{
    if (!listsMemory(readText(own + "/cgroup.controllers")))
        return false;
    std::istringstream members(readText(own + "/cgroup.procs"));
    long pid = 0;
    while (members >> pid) {
        if (pid != long(::getpid()))
            return false;
    }
    const std::string leaf = own + "/cw-app";
    if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST)
        return false;
    const std::string self = std::to_string(::getpid());
    if (!writeText(leaf + "/cgroup.procs", self)) {
        ::rmdir(leaf.c_str());
        return false;
    }
    if (!writeText(own + "/cgroup.subtree_control", "+memory")) {
        writeText(own + "/cgroup.procs", self); // back where it was
        ::rmdir(leaf.c_str());
        return false;
    }
    return true;
}

// The cgroup v2 folder under which runs' groups can have a memory limit, or "": our own
// cgroup where the controller is already enabled for its children, else our own cgroup made
// so by moving into a leaf (once per process: the move is not undone while it runs).
const std::string& cgroupV2ParentForRuns()
{
    static const std::string parent = [] {
        const std::string own = ownCgroupDir(true);
        if (own.empty())
            return std::string();
        if (listsMemory(readText(own + "/cgroup.subtree_control")))
            return own;
        return enableMemoryForSiblingsOfALeaf(own) ? own : std::string();
    }();
    return parent;
}

} // namespace

SandboxMemoryGroup::SandboxMemoryGroup(std::string dir, std::string kind, int procs)
    : m_dir(std::move(dir))
    , m_kind(std::move(kind))
    , m_procs(procs)
{
}

std::unique_ptr<SandboxMemoryGroup> SandboxMemoryGroup::create(
    std::uint64_t bytes, std::string& why)
{
    static std::atomic<unsigned> counter { 0 };
    const std::string name
        = "cw-sandbox-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
    // v2 first: where the memory controller is, or can be made, enabled for the runs' groups.
    const std::string& v2 = cgroupV2ParentForRuns();
    if (!v2.empty()) {
        const std::string dir = v2 + "/" + name;
        if (::mkdir(dir.c_str(), 0755) == 0) {
            const std::string limit = std::to_string(bytes);
            writeText(dir + "/memory.swap.max", "0");
            const int procs = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
            if (writeText(dir + "/memory.max", limit) && procs >= 0)
                return std::unique_ptr<SandboxMemoryGroup>(
                    new SandboxMemoryGroup(dir, "cgroup v2", procs));
            if (procs >= 0)
                ::close(procs);
            ::rmdir(dir.c_str());
        }
    }
    const std::string v1 = ownCgroupDir(false);
    if (v1.empty()) {
        why = "no cgroup memory controller is mounted here";
        return nullptr;
    }
    const std::string dir = v1 + "/" + name;
    if (::mkdir(dir.c_str(), 0755) != 0) {
        why = "cannot make a cgroup in " + v1 + ": " + std::strerror(errno);
        return nullptr;
    }
    const std::string limit = std::to_string(bytes);
    const bool limited = writeText(dir + "/memory.limit_in_bytes", limit);
    // Memory and swap together, where the kernel accounts swap (it must be at least the
    // memory limit, which is why it is written second).
    writeText(dir + "/memory.memsw.limit_in_bytes", limit);
    const int procs = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (!limited || procs < 0) {
        why = "cannot set the memory limit of " + dir + ": " + std::strerror(errno);
        if (procs >= 0)
            ::close(procs);
        ::rmdir(dir.c_str());
        return nullptr;
    }
    return std::unique_ptr<SandboxMemoryGroup>(new SandboxMemoryGroup(dir, "cgroup v1", procs));
}

bool SandboxMemoryGroup::hitLimit() const
{
    if (m_kind == "cgroup v2")
        return keyedValue(readText(m_dir + "/memory.events"), "oom_kill") > 0;
    return keyedValue(readText(m_dir + "/memory.oom_control"), "oom_kill") > 0;
}

void SandboxMemoryGroup::killAll() const
{
    if (m_kind == "cgroup v2" && writeText(m_dir + "/cgroup.kill", "1"))
        return;
    std::istringstream pids(readText(m_dir + "/cgroup.procs"));
    long pid = 0;
    while (pids >> pid)
        ::kill(pid_t(pid), SIGKILL);
}

SandboxMemoryGroup::~SandboxMemoryGroup()
{
    if (m_procs >= 0)
        ::close(m_procs);
    // A killed process leaves the group a moment after it is reaped.
    for (int attempt = 0; attempt < 100; ++attempt) {
        if (::rmdir(m_dir.c_str()) == 0 || errno != EBUSY)
            return;
        killAll();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

} // namespace cw
