// Test files taken apart (the preamble and each test with the comments and decorators above
// it) and joined from several rounds' files without repeating imports or helpers, for each
// language's test framework.
#include "app/test_generation/test_file_parts.h"

#include <QtTest>

using namespace cw;

class TestFilePartsTest : public QObject {
    Q_OBJECT
private slots:
    void splitsPython()
    {
        const TestFileParts parts = splitTestFile("python",
            "import pytest\nfrom calc import add\n\n\ndef helper(x):\n    return x\n\n\n"
            "# Adds.\n@pytest.mark.parametrize('a', [1, 2])\ndef test_add(a):\n    assert add(a, "
            "0) == a\n\n"
            "    # still inside\n    assert True\n\n\nclass TestMore:\n    def test_one(self):\n"
            "        assert add(1, 1) == 2\n\n    def test_two(self):\n        assert add(0, 0) == "
            "0\n");
        QCOMPARE(parts.tests.size(), 2);
        QCOMPARE(parts.tests[0].name, QString("test_add"));
        QVERIFY(parts.tests[0].text.startsWith("# Adds.\n@pytest.mark.parametrize"));
        QVERIFY(parts.tests[0].text.contains("still inside"));
        QCOMPARE(parts.tests[1].caseNames, QStringList({ "test_one", "test_two" }));
        QVERIFY(parts.preamble.contains("def helper(x):\n    return x"));
        QVERIFY(!parts.preamble.contains("test_add"));
        QVERIFY(blockOwnsCase(parts.tests[0], "test_add[2]"));
    }

    void splitsGoogleTestNodeAndGo()
    {
        const TestFileParts cpp = splitTestFile("cpp",
            "#include \"calc.h\"\n#include <gtest/gtest.h>\n\nstruct Fixture : ::testing::Test "
            "{};\n\n"
            "// Braces in strings: \"}\".\nTEST(Calc, Add)\n{\n    const char* s = \"}\";\n    "
            "EXPECT_EQ(add(1, 2), 3); /* } */\n}\n\nTEST_F(Fixture, Zero) { EXPECT_EQ(add(0, 0), "
            "0); }\n");
        QCOMPARE(cpp.tests.size(), 2);
        QCOMPARE(cpp.tests[0].name, QString("Calc.Add"));
        QVERIFY(cpp.tests[0].text.startsWith("// Braces in strings"));
        QVERIFY(cpp.tests[0].text.trimmed().endsWith("}"));
        QCOMPARE(cpp.tests[1].name, QString("Fixture.Zero"));
        QVERIFY(cpp.preamble.contains("struct Fixture"));

        const TestFileParts js = splitTestFile("javascript",
            "const test = require('node:test');\nconst { describe, it } = require('node:test');\n\n"
            "test('adds (a, b)', () => {\n  assert.equal(add(1, 2), 3);\n});\n\n"
            "describe('sub', () => {\n  it('takes away', () => {});\n  it(\"to zero\", () => "
            "{});\n});\n");
        QCOMPARE(js.tests.size(), 2);
        QCOMPARE(js.tests[0].name, QString("adds (a, b)"));
        QCOMPARE(js.tests[1].caseNames, QStringList({ "takes away", "to zero" }));

        const TestFileParts go = splitTestFile("go",
            "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tt.Run(\"x\", "
            "func(t "
            "*testing.T) {})\n}\n\nfunc helper() int { return 1 }\n");
        QCOMPARE(go.tests.size(), 1);
        QVERIFY(blockOwnsCase(go.tests[0], "TestAdd/x"));
        QVERIFY(go.preamble.contains("func helper()"));
    }

    void joinsRoundsWithoutRepeats()
    {
        const TestFileParts a = splitTestFile("python",
            "from calc import add\n\n\ndef helper(x):\n    y = x\n\n    return y\n\n\ndef "
            "test_a():\n"
            "    assert add(1, 1) == helper(2)\n");
        const TestFileParts b = splitTestFile("python",
            "import math\nfrom calc import add\n\n\ndef helper(x):\n    y = x\n\n    return y\n\n\n"
            "def test_b():\n    assert add(0, 0) == 0\n");
        const QString joined = joinTestFile({ a.preamble, b.preamble }, { a.tests[0], b.tests[0] });
        QCOMPARE(joined.count("from calc import add"), 1);
        QCOMPARE(joined.count("def helper(x):"), 1);
        QCOMPARE(joined.count("    return y"), 1);
        QVERIFY(joined.contains("import math"));
        QVERIFY(joined.indexOf("def test_a") < joined.indexOf("def test_b"));
        QVERIFY(joined.endsWith("assert add(0, 0) == 0\n"));
    }
};

QTEST_GUILESS_MAIN(TestFilePartsTest)
#include "test_file_parts_test.moc"
