// Special files where sixstep expects a regular file: a FIFO blocks forever
// when opened for reading, a device never ends, a folder is not a file. Each
// is refused at once with a clear message. And --out: never over anything but
// a regular file, and over a file only with --force, all or nothing.
#include <doctest/doctest.h>

#include <unistd.h>

#include "hostile.h"
#include "pipeline/core/error.h"
#include "pipeline/core/file.h"
#include "pipeline/llm/gguf/gguf.h"

using namespace sixstep;
using namespace sixstep::test;

namespace files_test {

namespace {
const std::string fifo_msg = "it is a FIFO (named pipe), not a regular file";
const std::string model = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
}  // namespace

TEST_CASE("files: read_regular_file refuses FIFOs, devices, folders and files over the limit") {
    const std::string fifo = make_fifo("read.fifo");
    CHECK_THROWS_WITH_AS(read_regular_file(fifo, "the lesson file", 1 << 20),
                         (fifo + ": cannot open the lesson file: " + fifo_msg).c_str(), Error);
    CHECK_THROWS_WITH_AS(read_regular_file("/dev/zero", "the data", 1 << 20),
                         "/dev/zero: cannot open the data: it is a character device, not a regular file", Error);
    CHECK_THROWS_WITH_AS(read_regular_file(scratch().string(), "the data", 1 << 20),
                         (scratch().string() + ": cannot open the data: it is a folder, not a regular file").c_str(),
                         Error);
    const std::string big = write_text("big.txt", std::string(3000, 'x'));
    CHECK_THROWS_WITH_AS(read_regular_file(big, "the lesson file", 2048),
                         (big + ": the lesson file is 2.9 KiB; sixstep reads at most 2.0 KiB").c_str(), Error);
    CHECK(read_regular_file(big, "the lesson file", 4096).size() == 3000);
}

TEST_CASE("files: a FIFO or a device as a model is refused at once") {
    const std::string fifo = make_fifo("model.gguf");
    CHECK_THROWS_WITH_AS(llm::GGUFFile::open(fifo), ("cannot open " + fifo + ": " + fifo_msg).c_str(), Error);
    for (const std::string& cmd : {"inspect '" + fifo + "'", "tokenize -m '" + fifo + "' hi",
                                  "generate -m '" + fifo + "' --prompt hi -n 1", "bench -m '" + fifo + "' -p 1 -n 1 -r 1"}) {
        CAPTURE(cmd);
        const auto r = run_sixstep(cmd, 10);
        CHECK(r.exit_code == 2);
        CHECK(contains(r.output, fifo_msg));
    }
    const auto dev = run_sixstep("inspect /dev/zero", 10);
    CHECK(dev.exit_code == 2);
    CHECK(contains(dev.output, "cannot open /dev/zero: it is a character device, not a regular file"));
    const auto dir = run_sixstep("inspect '" + scratch().string() + "'", 10);
    CHECK(dir.exit_code == 2);
    CHECK(contains(dir.output, "it is a folder, not a regular file"));
}

TEST_CASE("files: a FIFO as a lesson, weights or training data is refused at once") {
    const std::string lesson = make_fifo("lesson.yaml");
    auto r = run_sixstep("--headless '" + lesson + "'", 10);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, lesson + ": cannot open the lesson file: " + fifo_msg));
    r = run_sixstep("check '" + lesson + "'", 10);
    CHECK(r.exit_code == 2);
    CHECK(last_line(r.output) == "lessons: 0 passed, 0 failed, 1 invalid");

    const std::string weights = make_fifo("weights.json");
    r = run_sixstep("infer delivery --distance '3 km' --congestion 0 --express-lane 0 --weights '" + weights + "'", 10);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, weights + ": cannot open the weights file: " + fifo_msg));

    // Inside a lesson: the lesson is refused when it loads, at the key that names the file (exit 2).
    const std::string data = make_fifo("data.csv");
    const std::string lesson2 = write_text("fifo-data.yaml", "title: T\nsteps:\n  - train: {steps: 1, data: data.csv}\n");
    r = run_sixstep("--headless '" + lesson2 + "'", 10);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, lesson2 + ":3:"));
    CHECK(contains(r.output, data + ": cannot open the training data: " + fifo_msg));
    const std::string lesson3 = write_text("fifo-weights.yaml", "title: T\nmodel: {weights_file: weights.json}\n"
                                                                "steps:\n  - request: {distance: 3 km, congestion: 0, "
                                                                "express_lane: 0}\n    run: all\n");
    r = run_sixstep("--headless '" + lesson3 + "'", 10);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, lesson3 + ":2:"));
    CHECK(contains(r.output, weights + ": cannot open the weights file: " + fifo_msg));
}

TEST_CASE("bench --random --out: never over a FIFO, a device, a folder or a link, and over a file only with --force") {
    const fs::path dir = scratch() / "out";
    fs::create_directories(dir);
    const std::string fifo = make_fifo("out/model.gguf");
    auto r = run_sixstep("bench --random tiny --out '" + fifo + "'", 20);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, fifo + ": will not write here: it is a FIFO (named pipe), not a regular file"));
    CHECK(fs::is_fifo(fifo));

    r = run_sixstep("bench --random tiny --out /dev/null --force", 20);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "/dev/null: will not write here: it is a character device, not a regular file"));

    r = run_sixstep("bench --random tiny --out '" + dir.string() + "' --force", 20);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "it is a folder, not a regular file"));

    const fs::path link = dir / "link.gguf";
    fs::create_symlink("/dev/null", link);
    r = run_sixstep("bench --random tiny --out '" + link.string() + "' --force", 20);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "it is a symbolic link, not a regular file"));
    CHECK(fs::is_symlink(link));

    const std::string file = write_text("out/old.gguf", "precious");
    r = run_sixstep("bench --random tiny --out '" + file + "'", 20);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, file + ": the file exists; add --force to overwrite it"));
    CHECK(read_regular_file(file, "it", 100) == "precious");
    r = run_sixstep("bench --random tiny --out '" + file + "' --force", 20);
    CHECK(r.exit_code == 0);
    CHECK(llm::GGUFFile::open(file).tensors().size() > 0);

    // Nothing else was left in the folder (no temporary files).
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string()[0] == '.';
    CHECK(n == 0);
}

TEST_CASE("files: a FIFO as a prompt file, a text, a trace or a file to update is refused at once") {
    const std::string fifo = make_fifo("input.txt");
    const std::pair<std::string, std::string> cases[] = {
        {"load --url http://127.0.0.1:1 --rate 1 --prompt-file '" + fifo + "'", "the prompt file"},
        {"perplexity -m '" + model + "' --text '" + fifo + "'", "the text file"},
        {"traffic -m '" + model + "' --arrivals 'trace:" + fifo + "'", "the trace file"},
        {"paths --markdown --update '" + fifo + "'", "the file"},
    };
    for (const auto& entry : cases) {
        const auto& cmd = entry.first;
        const auto& what = entry.second;
        CAPTURE(cmd);
        const auto r = run_sixstep(cmd, 10);
        CHECK(r.exit_code == 2);
        CHECK(contains(r.output, fifo + ": cannot open " + what + ": " + fifo_msg));
    }
}

TEST_CASE("files: quantize never writes over a FIFO or a link, and over a file only with --force") {
    const std::string fifo = make_fifo("quantized.gguf");
    for (const std::string& force : {std::string(""), std::string(" --force")}) {
        const auto r = run_sixstep("quantize '" + model + "' '" + fifo + "' --type q8_0" + force, 30);
        CHECK(r.exit_code == 2);
        CHECK(contains(r.output, fifo + ": will not write here: it is a FIFO (named pipe), not a regular file"));
        CHECK(fs::is_fifo(fifo));
    }
}

TEST_CASE("files: AtomicFile's commit refuses a target that became a FIFO after the checks") {
    const fs::path target = scratch() / "late.bin";
    fs::remove(target);
    AtomicFile out(target.string());
    out.write("bytes");
    make_fifo("late.bin");
    CHECK_THROWS_WITH_AS(out.commit(), (target.string() + ": will not write here: it is a FIFO (named pipe), not a regular file").c_str(),
                         Error);
    CHECK(fs::is_fifo(target));
}

}  // namespace files_test
