#pragma once

// A prepared SQLite statement with Qt-typed binds and columns, and a transaction guard.
// Internal to app/history.
#include <QByteArray>
#include <QString>
#include <sqlite3.h>

namespace cw::history {

class SqlStatement {
public:
    SqlStatement(sqlite3* db, const char* sql)
        : m_db(db)
    {
        m_rc = sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr);
    }
    ~SqlStatement() { sqlite3_finalize(m_stmt); }
    SqlStatement(const SqlStatement&) = delete;
    SqlStatement& operator=(const SqlStatement&) = delete;

    bool ok() const { return m_rc == SQLITE_OK || m_rc == SQLITE_ROW || m_rc == SQLITE_DONE; }
    QString error() const { return QString::fromUtf8(sqlite3_errmsg(m_db)); }

    SqlStatement& bind(int index, qint64 value)
    {
        keep(sqlite3_bind_int64(m_stmt, index, value));
        return *this;
    }
    SqlStatement& bind(int index, int value) { return bind(index, qint64(value)); }
    SqlStatement& bind(int index, double value)
    {
        keep(sqlite3_bind_double(m_stmt, index, value));
        return *this;
    }
    SqlStatement& bind(int index, const QString& value)
    {
        const QByteArray utf8 = value.toUtf8();
        keep(
            sqlite3_bind_text(m_stmt, index, utf8.constData(), int(utf8.size()), SQLITE_TRANSIENT));
        return *this;
    }
    SqlStatement& bindBlob(int index, const QByteArray& value)
    {
        keep(sqlite3_bind_blob(
            m_stmt, index, value.constData(), int(value.size()), SQLITE_TRANSIENT));
        return *this;
    }
    SqlStatement& bindNull(int index)
    {
        keep(sqlite3_bind_null(m_stmt, index));
        return *this;
    }

    // SQLITE_ROW, SQLITE_DONE or an error code (also kept for ok()).
    int step()
    {
        if (!ok())
            return m_rc;
        m_rc = sqlite3_step(m_stmt);
        return m_rc;
    }
    // Runs a statement that returns no rows; false on error.
    bool run() { return step() == SQLITE_DONE; }
    void reset()
    {
        sqlite3_reset(m_stmt);
        sqlite3_clear_bindings(m_stmt);
        if (m_stmt)
            m_rc = SQLITE_OK;
    }

    qint64 int64(int column) const { return sqlite3_column_int64(m_stmt, column); }
    int integer(int column) const { return sqlite3_column_int(m_stmt, column); }
    double real(int column) const { return sqlite3_column_double(m_stmt, column); }
    bool isNull(int column) const { return sqlite3_column_type(m_stmt, column) == SQLITE_NULL; }
    QString text(int column) const
    {
        const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, column));
        return QString::fromUtf8(data, sqlite3_column_bytes(m_stmt, column));
    }
    QByteArray blob(int column) const
    {
        const auto* data = static_cast<const char*>(sqlite3_column_blob(m_stmt, column));
        return QByteArray(data, sqlite3_column_bytes(m_stmt, column));
    }

private:
    void keep(int rc)
    {
        if (rc != SQLITE_OK && ok())
            m_rc = rc;
    }

    sqlite3* m_db;
    sqlite3_stmt* m_stmt = nullptr;
    int m_rc = SQLITE_OK;
};

// BEGIN IMMEDIATE ... COMMIT; rolls back when destroyed uncommitted.
class SqlTransaction {
public:
    explicit SqlTransaction(sqlite3* db)
        : m_db(db)
    {
        m_open = sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK;
    }
    ~SqlTransaction()
    {
        if (m_open)
            sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
    }
    SqlTransaction(const SqlTransaction&) = delete;
    SqlTransaction& operator=(const SqlTransaction&) = delete;

    bool began() const { return m_open; }
    bool commit()
    {
        if (!m_open)
            return false;
        const bool committed = sqlite3_exec(m_db, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK;
        m_open = !committed;
        return committed;
    }

private:
    sqlite3* m_db;
    bool m_open = false;
};

} // namespace cw::history
