#pragma once

#include <QList>
#include <QString>
#include <optional>

namespace cw::generation {

enum class Backend { InProcess, Remote };

// Which backends a review tries, in order: the second is used when the first cannot be
// (the local model does not load, e.g. the card has no room; the server cannot be reached).
enum class BackendOrder { LocalOnly, RemoteOnly, LocalThenRemote, RemoteThenLocal };

QString backendOrderKey(BackendOrder order); // "local", "remote", "local,remote", "remote,local"
std::optional<BackendOrder> backendOrderFromKey(const QString& key);
QList<Backend> backendsOf(BackendOrder order);

} // namespace cw::generation
