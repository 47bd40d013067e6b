// clausewright-xlsx-writer OUT.xlsx < workbook.json: writes the workbook the JSON describes
// with libxlsxwriter. It is a process of its own because QuaZip (linked into the app for DOCX)
// exports minizip's function names with its own meanings: in one process libxlsxwriter's calls
// to minizip's zipOpen reach QuaZip's and crash. Here only libxlsxwriter and minizip are linked.
//
// The JSON: {"formats": [{"bold", "wrap", "top", "center", "bottom_border", "border",
// "background": 0xRRGGBB}...], "sheets": [{"name", "columns": [[first, last, width, format]],
// "merges": [[row1, col1, row2, col2, text, format]], "cells": [[row, col, text|number,
// format]], "freeze": [row, col], "autofilter": [row1, col1, row2, col2]}]}; a format of -1 is
// none. Exit status 0, or 1 with the reason on standard error (the output file is then removed).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
#include <xlsxwriter.h>

namespace {

using nlohmann::json;

lxw_format* formatAt(const std::vector<lxw_format*>& formats, const json& index)
{
    const int i = index.is_number_integer() ? index.get<int>() : -1;
    return i >= 0 && i < int(formats.size()) ? formats[size_t(i)] : nullptr;
}

lxw_error writeSheet(lxw_worksheet* sheet, const json& s, const std::vector<lxw_format*>& formats)
{
    lxw_error error = LXW_NO_ERROR;
    auto keep = [&error](lxw_error e) {
        if (error == LXW_NO_ERROR)
            error = e;
    };
    for (const json& c : s.value("columns", json::array()))
        keep(worksheet_set_column(sheet, c.at(0).get<lxw_col_t>(), c.at(1).get<lxw_col_t>(),
            c.at(2).get<double>(), formatAt(formats, c.at(3))));
    for (const json& m : s.value("merges", json::array()))
        keep(worksheet_merge_range(sheet, m.at(0).get<lxw_row_t>(), m.at(1).get<lxw_col_t>(),
            m.at(2).get<lxw_row_t>(), m.at(3).get<lxw_col_t>(), m.at(4).get<std::string>().c_str(),
            formatAt(formats, m.at(5))));
    for (const json& c : s.value("cells", json::array())) {
        const auto row = c.at(0).get<lxw_row_t>();
        const auto col = c.at(1).get<lxw_col_t>();
        lxw_format* format = formatAt(formats, c.at(3));
        if (c.at(2).is_number())
            keep(worksheet_write_number(sheet, row, col, c.at(2).get<double>(), format));
        else
            keep(worksheet_write_string(
                sheet, row, col, c.at(2).get<std::string>().c_str(), format));
    }
    if (s.contains("freeze"))
        worksheet_freeze_panes(
            sheet, s["freeze"].at(0).get<lxw_row_t>(), s["freeze"].at(1).get<lxw_col_t>());
    if (s.contains("autofilter")) {
        const json& a = s["autofilter"];
        keep(worksheet_autofilter(sheet, a.at(0).get<lxw_row_t>(), a.at(1).get<lxw_col_t>(),
            a.at(2).get<lxw_row_t>(), a.at(3).get<lxw_col_t>()));
    }
    return error;
}

int fail(const std::string& out, const std::string& why)
{
    std::fprintf(stderr, "clausewright-xlsx-writer: %s: %s\n", out.c_str(), why.c_str());
    std::remove(out.c_str());
    return 1;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: clausewright-xlsx-writer OUT.xlsx < workbook.json\n");
        return 2;
    }
    const std::string out = argv[1];
    json description;
    try {
        std::string input;
        char chunk[65536];
        for (size_t got; (got = std::fread(chunk, 1, sizeof chunk, stdin)) > 0;)
            input.append(chunk, got);
        description = json::parse(input);
    } catch (const json::exception& e) {
        return fail(out, std::string("the workbook description is not JSON: ") + e.what());
    }
    lxw_workbook* book = workbook_new(out.c_str());
    if (!book)
        return fail(out, "cannot start the workbook");
    lxw_error error = LXW_NO_ERROR;
    try {
        std::vector<lxw_format*> formats;
        for (const json& f : description.value("formats", json::array())) {
            lxw_format* format = workbook_add_format(book);
            if (f.value("bold", false))
                format_set_bold(format);
            if (f.value("wrap", false))
                format_set_text_wrap(format);
            if (f.value("top", false))
                format_set_align(format, LXW_ALIGN_VERTICAL_TOP);
            if (f.value("center", false))
                format_set_align(format, LXW_ALIGN_CENTER);
            if (f.value("bottom_border", false))
                format_set_bottom(format, LXW_BORDER_THIN);
            if (f.value("border", false))
                format_set_border(format, LXW_BORDER_THIN);
            if (f.contains("background"))
                format_set_bg_color(format, f["background"].get<lxw_color_t>());
            formats.push_back(format);
        }
        for (const json& s : description.value("sheets", json::array())) {
            lxw_worksheet* sheet
                = workbook_add_worksheet(book, s.at("name").get<std::string>().c_str());
            if (!sheet) {
                error = LXW_ERROR_SHEETNAME_ALREADY_USED;
                break;
            }
            if (const lxw_error e = writeSheet(sheet, s, formats);
                e != LXW_NO_ERROR && error == LXW_NO_ERROR)
                error = e;
        }
    } catch (const json::exception& e) {
        workbook_close(book);
        return fail(out, std::string("bad workbook description: ") + e.what());
    }
    const lxw_error closed = workbook_close(book);
    if (error == LXW_NO_ERROR)
        error = closed;
    if (error != LXW_NO_ERROR)
        return fail(out, lxw_strerror(error));
    return 0;
}
