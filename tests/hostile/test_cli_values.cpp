// Numbers on the command line that must be refused before they reach the
// engine or ImGui: NaN, infinities, "1e400", seeds that wrap around, and
// window sizes and font scales that crash the renderer.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "hostile.h"

using namespace sixstep::test;

namespace {
const std::string model_file = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
const std::string lesson01 = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/01-six-steps.yaml";
const std::string infer_request = "infer delivery --distance '3 km' --congestion 0 --express-lane 0 ";

void refused(const std::string& args, const std::string& message) {
    CAPTURE(args);
    const auto r = run_sixstep(args, 20);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, message));
}
}  // namespace

TEST_CASE("cli: infer refuses a minimum or dropout that is not a finite number in range") {
    refused(infer_request + "--minimum 1e400", "--minimum: 1e400 is not a finite number from 0 to 1000000");
    refused(infer_request + "--minimum inf", "--minimum: inf is not a finite number from 0 to 1000000");
    refused(infer_request + "--minimum nan", "--minimum: nan is not a finite number from 0 to 1000000");
    refused(infer_request + "--train-mode --dropout nan", "--dropout: nan is not a finite number from 0 to 0.99");
    refused(infer_request + "--train-mode --dropout 0.999", "--dropout: 0.999 is not a finite number from 0 to 0.99");
    refused(infer_request + "--minimum 12abc", "--minimum: \"12abc\" is not a number");
    const auto ok = run_sixstep(infer_request + "--minimum 15", 20);
    CHECK(ok.exit_code == 0);
    CHECK(last_line(ok.output) == "Estimated delivery time: 15 minutes");
    // Eval mode turns dropout off: a rate there changed nothing, silently.
    refused(infer_request + "--dropout 0.5",
            "--dropout acts only in train mode (eval mode turns dropout off): add --train-mode, or leave --dropout out");
    CHECK(run_sixstep(infer_request + "--train-mode --dropout 0.5", 20).exit_code == 0);
}

// Messages that named what the user did not write, or not what was wrong.
TEST_CASE("cli: a message names the value written and the fix that works") {
    // The range the option takes, not the edge of a double.
    refused("waits -m '" + model_file + "' --reading-wpm 1e-320", "--reading-wpm: 1e-320 is not a finite number from 1 to 10000");
    // A space after a number is dropped, as one before it was; other text is the project's message, not CLI11's.
    const auto spaced = run_sixstep("kv-calc --preset stories-3m --tokens '5 ' --json", 20);
    CHECK(spaced.exit_code == 0);
    CHECK(spaced.output == run_sixstep("kv-calc --preset stories-3m --tokens ' 5' --json", 20).output);
    refused("kv-calc --preset stories-3m --tokens '\xef\xbc\x95'", "--tokens: \"\xef\xbc\x95\" is not a number");  // full-width 5
    refused("kv-calc --preset stories-3m --tokens 5x", "--tokens: \"5x\" is not a number");
    for (const char* args : {"kv-calc --preset stories-3m --tokens '5 '", "kv-calc --preset stories-3m --tokens 5x",
                             "canary --requests 2147483648"})
        CHECK_FALSE(contains(run_sixstep(args, 20).output, "Could not convert"));
    refused("canary --requests 2147483648", "--requests: 2147483648 is too large (at most 2147483647)");
    refused("canary --requests 99999999999999999999", "--requests: 99999999999999999999 is too large a number");
    // The option to change, not a default nobody typed ("100 baseline requests: give 0..1").
    refused("canary --requests 1",
            "--requests 1 is fewer than the 100 requests v1 serves alone before the canary (--baseline, default 100): "
            "give --requests 100 or more, or a smaller --baseline");
    refused("canary --requests 50 --baseline 60", "--baseline 60 is more than the 50 requests in the stream (--requests): give --baseline 0..50");
    CHECK(run_sixstep("canary --requests 1 --baseline 0", 20).exit_code == 0);
    // The word that named no model, not "A subcommand is required".
    refused("infer llm", "infer: no model \"llm\" (infer runs: delivery); a language model runs with `sixstep generate`");
    refused("infer foo", "infer: no model \"foo\" (infer runs: delivery)");
    refused("infer delivry", "did you mean delivery?");
    refused("infer", "infer needs a model");
    // An unknown option by its name, not "1 --distance-x were not expected".
    refused("infer delivery --no-normalize --distance-x 1",
            "--distance-x is not an option of `sixstep infer delivery` (`sixstep infer delivery --help` lists them)");
    // A link loop says so, as every other command does, not "File does not exist".
    const auto loop = scratch() / "loop1";
    std::error_code ec;
    fs::remove(loop, ec);
    fs::create_symlink("loop1", loop);
    refused("screenshot '" + loop.string() + "' --out '" + (scratch() / "shots").string() + "'",
            "cannot open the lesson: Too many levels of symbolic links");
    refused("screenshot '" + (scratch() / "none.yaml").string() + "' --out x",
            "none.yaml: cannot open the lesson: No such file or directory");
}

TEST_CASE("cli: seeds must be whole numbers from 0 to 2^64 − 1, never wrapped around") {
    const std::string gen = "generate -m '" + model_file + "' --prompt hi -n 1 ";
    refused(gen + "--seed -1", "--seed: -1 is not a whole number from 0 to 18446744073709551615");
    refused(gen + "--seed 18446744073709551616", "--seed: 18446744073709551616 is not a whole number");
    refused(gen + "--seed 1e3", "--seed: 1e3 is not a whole number");
    refused("bench --random tiny --out '" + (scratch() / "seed.gguf").string() + "' --seed -5", "--seed: -5 is not a whole number");
    CHECK(run_sixstep(gen + "--seed 18446744073709551615", 20).exit_code == 0);
}

TEST_CASE("cli: generate refuses sampling numbers that are not finite") {
    const std::string gen = "generate -m '" + model_file + "' --prompt hi -n 1 ";
    refused(gen + "--temp nan", "--temp: nan is not a finite number");
    refused(gen + "--temp inf", "--temp: inf is not a finite number");
    refused(gen + "--top-p nan", "--top-p: nan is not a finite number");
    refused(gen + "--min-p 1e400", "--min-p: 1e400 is not a finite number");
}

TEST_CASE("cli: a tiny temperature is greedy: the same text as --temp 0") {
    const std::string gen = "generate -m '" + model_file + "' --prompt 'The cat sat on the' -n 8 --top-k 0 --top-p 1 --min-p 0 ";
    const auto greedy = run_sixstep(gen + "--temp 0 --json", 30);
    const auto tiny = run_sixstep(gen + "--temp 1e-38 --json", 30);
    REQUIRE(greedy.exit_code == 0);
    REQUIRE(tiny.exit_code == 0);
    const auto g = nlohmann::json::parse(greedy.output), t = nlohmann::json::parse(tiny.output);
    CHECK(t["text"] == g["text"]);
    CHECK(t["text"].get<std::string>().size() > 8);
}

// The screenshot command exists only where the window is built (not in the
// ASan build, which leaves the GUI out).
#ifdef SIXSTEP_TEST_HAS_GUI
TEST_CASE("cli: screenshot sizes and font scales are checked before the renderer sees them") {
    const std::string shot = "screenshot '" + lesson01 + "' --out '" + (scratch() / "shots").string() + "' ";
    refused(shot + "--font-scale 0", "--font-scale: 0 is not a finite number from 0.25 to 4");
    refused(shot + "--font-scale 1e10", "--font-scale: 1e10 is not a finite number from 0.25 to 4");
    refused(shot + "--font-scale nan", "--font-scale: nan is not a finite number from 0.25 to 4");
    refused(shot + "--font-scale -1", "--font-scale: -1 is not a finite number from 0.25 to 4");
    refused(shot + "--size 99999999999x720", "--size \"99999999999x720\": expected WIDTHxHEIGHT");
    refused(shot + "--size 100000x100000", "--size 100000x100000 is out of range (320x240 to 8192x8192)");
    refused(shot + "--size 0x0", "--size 0x0 is out of range");
}

TEST_CASE("cli: a font file that is no font is said so, and the pictures are drawn without it") {
    // ImGui stopped the program on it (an assertion on the face index).
    const std::string zh = std::string(SIXSTEP_SOURCE_DIR) + "/lessons/zh/01-six-steps.yaml";
    const std::filesystem::path text = scratch() / "not-a-font.ttc";
    std::ofstream(text) << "ttc? no: a few words of text\n";
    const auto r = run_command("SIXSTEP_CJK_FONT='" + text.string() + "' timeout -s KILL 120 " +
                               sixstep_cmd("screenshot '" + zh + "' --out '" + (scratch() / "cjk-shots").string() +
                                           "' --size 640x360"));
    CHECK_MESSAGE(r.exit_code == 0, r.output);
    CHECK(contains(r.output, "sixstep: warning: not a font file: " + text.string() +
                                 " (SIXSTEP_CJK_FONT names a .ttf, .otf or .ttc)"));
    CHECK(std::filesystem::exists(scratch() / "cjk-shots" / "step-01.png"));
    // A FIFO is no font file either: it blocked the read forever.
    const std::filesystem::path fifo = scratch() / "font.fifo";
    std::filesystem::remove(fifo);
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const auto piped = run_command("SIXSTEP_CJK_FONT='" + fifo.string() + "' timeout -s KILL 120 " +
                                   sixstep_cmd("screenshot '" + zh + "' --out '" + (scratch() / "fifo-shots").string() +
                                               "' --size 640x360"));
    CHECK_MESSAGE(piped.exit_code == 0, piped.output);
    CHECK(contains(piped.output, "sixstep: warning: Chinese font not found: " + fifo.string()));
    // DejaVu's folder holding text files named like its fonts: ImGui's default font instead.
    const std::filesystem::path fonts = scratch() / "fake-fonts";
    std::filesystem::create_directories(fonts);
    for (const char* f : {"DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSansMono.ttf"}) std::ofstream(fonts / f) << "no\n";
    const auto latin = run_command("SIXSTEP_FONT_DIR='" + fonts.string() + "' timeout -s KILL 120 " +
                                   sixstep_cmd("screenshot '" + lesson01 + "' --out '" +
                                               (scratch() / "latin-shots").string() + "' --size 640x360"));
    CHECK_MESSAGE(latin.exit_code == 0, latin.output);
    CHECK(contains(latin.output, "sixstep: warning: not a font file: " + (fonts / "DejaVuSans.ttf").string()));
}

// A lesson author checks a lesson at the projector's size: a step whose text
// is too long for the narration pane is named, the other step is not, and
// every picture is still written (a warning, not an error).
TEST_CASE("cli: screenshot names each step whose pane's content does not fit, and writes every step") {
    std::string words;
    for (int i = 0; i < 120; ++i) words += "The request waits in the queue. ";
    const std::string lesson = write_text("too-long.yaml",
                                          "title: Too long\nmodel: {kind: delivery}\nsteps:\n"
                                          "  - title: Short\n    say: One line.\n"
                                          "  - title: Long\n    say: \"" + words + "\"\n");
    const fs::path out = scratch() / "fit-shots";
    const auto r = run_sixstep("screenshot '" + lesson + "' --out '" + out.string() + "' --size 1024x768", 60);
    CHECK(r.exit_code == 0);
    CHECK(fs::exists(out / "step-01.png"));
    CHECK(fs::exists(out / "step-02.png"));
    CHECK(contains(r.output, "sixstep: warning: 1024x768, step 2: ##narration"));
    CHECK(contains(r.output, "content below the pane by"));
    // The pane as its ids name it, without ImGui's hash of a child's id
    // ("##narration/##say_9548F944").
    const std::size_t at = r.output.find("step 2: ##narration");
    REQUIRE(at != std::string::npos);
    const std::string pane = r.output.substr(at + 8, r.output.find(": content", at) - at - 8);
    CHECK(pane.find('_') == std::string::npos);
    CHECK_FALSE(contains(r.output, "step 1:"));
    CHECK(contains(r.output, "place where a pane's content does not fit at 1024x768"));
    // A bundled lesson fits: no warning at all.
    const auto fits = run_sixstep("screenshot '" + lesson01 + "' --out '" + out.string() + "' --size 1024x768", 60);
    CHECK(fits.exit_code == 0);
    CHECK_FALSE(contains(fits.output, "warning"));
}

// A lesson whose checks fail still gives its pictures (they show the ✗),
// and the terminal says which step failed and how.
TEST_CASE("cli: screenshot warns of a step whose checks fail, and writes every step") {
    const std::string lesson = write_text("failing.yaml",
                                          "title: Failing\nmodel: {kind: delivery}\nsteps:\n"
                                          "  - say: One line.\n"
                                          "  - request: {distance: \"3 km\", congestion: 0, express_lane: 0}\n"
                                          "    run: all\n    expect: {response.minutes: 12}\n");
    const fs::path out = scratch() / "failing-shots";
    const auto r = run_sixstep("screenshot '" + lesson + "' --out '" + out.string() + "'", 60);
    CHECK(r.exit_code == 0);
    CHECK(fs::exists(out / "step-02.png"));
    CHECK(contains(r.output, "sixstep: warning: step 2: 1 of 1 checks failed; first: ✗ "));
    CHECK(contains(r.output, "response.minutes: expected = 12, got 11"));
    CHECK_FALSE(contains(r.output, "step 1:"));
}
#endif

TEST_CASE("cli: a value the parser refuses is quoted escaped and cut short") {
    const auto esc = run_sixstep("bench --slices \"$(printf '\\033[2Jx')\"", 20);
    CHECK(esc.exit_code == 2);
    CHECK(contains(esc.output, "--slices: \\x1b[2Jx is not a whole number"));
    CHECK(contains(esc.output, "Run with --help for more information."));
    CHECK(esc.output.find('\x1b') == std::string::npos);
    const auto big = run_sixstep("bench --slices " + std::string(100000, '9'), 20);
    CHECK(big.exit_code == 2);
    CHECK(contains(big.output, "bytes left out"));
    CHECK(big.output.size() < 2500);
}

TEST_CASE("cli: numbers at the edges of a double are refused, never a hang, nan or inf") {
    // A denormal service time left the simulated clock standing still: the run never ended.
    refused("queue --service-ms 1e-310 --utilization 0.5 --requests 1000",
            "--service-ms: 1e-310 is too close to zero to compute with");
    refused("queue --service-ms 1e-400 --utilization 0.5 --requests 1000", "--service-ms: 1e-400 is too close to zero");
    refused("queue --service-ms 1e308 --utilization 0.5 --requests 1000",
            "queue: a service time of 1e+308 ms is out of range (1e-6 … 1e9 ms)");
    refused("bill --params 1e9 --train-tokens 1e6 --decode-tok-s 100 --price-per-hour 1e308",
            "price per hour: must be from 0 to 1e+09, got 1e+308");
    refused("bill --params 1e-320 --train-tokens 1e6 --decode-tok-s 100", "--params: 1e-320 is too close to zero");
    // Past the largest double the text reads as inf; the message quotes what was written, not "inf".
    refused("load --url http://127.0.0.1:9/ --rate 1e400 --requests 1", "--rate: 1e400 is too large to compute with");
    refused("bill --params 1e6 --train-tokens 1e6 --decode-tok-s 100 --days -1e999", "--days: -1e999 is too large to compute with");
    refused(infer_request.substr(0, infer_request.find("--distance")) + "--distance '1e308 km' --congestion 0 --express-lane 0",
            "the forward pass overflowed: 5 + 2×1e+308 + 10×0 + (−2)×0 = inf");
    refused("traffic -m '" + model_file + "' --ttft-target nan", "--ttft-target: nan is not a finite number");
    refused("serve -m '" + model_file + "' --shutdown-grace nan", "--shutdown-grace: nan is not a finite number");
    refused("serve -m '" + model_file + "' --ctx -1", "--ctx: Value -1 not in range");
    refused("serve -m '" + model_file + "' --ctx 99999", "context 99999: the model holds at most 512 positions (n_ctx; 0: all of them)");
    for (const std::string& cmd : {std::string("canary"), std::string("queue --service-ms 2 --utilization 0.5"), "traffic -m '" + model_file + "'",
                                  "waits -m '" + model_file + "'", "speculate -m '" + model_file + "'"})
        refused(cmd + " --seed -1", "--seed: -1 is not a whole number from 0 to 18446744073709551615");
}

TEST_CASE("cli: an empty value is not a number, nor an empty folder name a folder") {
    // CLI11 read "" as 0: "layers: must be at least 1, got 0" blamed a number nobody wrote.
    refused("kv-calc --layers '' --kv-heads 8 --head-dim 128 --tokens 10", "--layers: an empty value is not a number");
    refused("bill --params 1e9 --train-tokens 1e6 --decode-tok-s 100 --days ''", "--days: an empty value is not a number");
    // Before an option's range check, which read it as 0 ("Value  not in range 1 to 1000").
    refused("bench --contention --slices ''", "--slices: an empty value is not a number");
#ifdef SIXSTEP_TEST_HAS_GUI
    refused("screenshot '" + lesson01 + "' --out ''", "--out: give a folder, not an empty name");
#endif
}

TEST_CASE("cli: numbers are read in decimal (010 is ten, never octal eight), and 0x10, 2.5 and 1e3 are refused as whole numbers") {
    // CLI11 alone read "010" as octal: `-t 010` ran 8 threads, `--batch 1,010` batch 8.
    const std::string gen = "generate -m '" + model_file + "' --prompt hi --temp 0 ";
    const auto ten = run_sixstep(gen + "-n 010", 20);
    CHECK(ten.exit_code == 0);
    CHECK(contains(ten.output, "| 10 tokens in "));
    CHECK(contains(run_sixstep(gen + "-n +007", 20).output, "| 7 tokens in "));
    refused(gen + "-n 0x10", "--n-predict: 0x10 is not a whole number");
    refused(gen + "-n 2.5", "--n-predict: 2.5 is not a whole number");
    refused(gen + "-n 1e3", "--n-predict: 1e3 is not a whole number");
    refused(gen + "-n ' '", "--n-predict: an empty value is not a number");
    refused("bench --contention --slices 0b11", "--slices: 0b11 is not a whole number");
    // Each element of a list too.
    refused("bench -m '" + model_file + "' --batch 1,0x2", "--batch: 0x2 is not a whole number");
    // Seeds keep their own check after this one.
    refused("canary --seed 010.5", "--seed: 010.5 is not a whole number");
    // Other numbers: strtod would read hexadecimal ("0x10" layers were 16).
    refused("kv-calc --layers 0x10 --kv-heads 8 --head-dim 128 --tokens 10", "--layers: 0x10 is not a number in decimal");
}

// Sizes that crashed or ran away before anything checked them: a KV block
// of 2^31 positions (a segfault in attention), a server of 2^31 handler
// threads (an int overflow, then an abort), a shared prefix of 2^31 tokens
// and a sweep's context of 2^20 (gigabytes allocated before the refusal),
// load rates whose gaps overflow a clock (years of sleep, or none at all).
TEST_CASE("cli: sizes and rates past what the engine can hold are refused before anything is allocated") {
    const std::string m = "'" + model_file + "'";
    refused("serve -m " + m + " --port 0 --block-size 5000", "block size 5000: a block holds 1 to 4096 positions");
    refused("serve -m " + m + " --port 0 --max-concurrent 2147483647",
            "--max-concurrent: Value 2147483647 not in range 1 to 1024");
    refused("traffic -m " + m + " --count 4 --max-tokens 8 --shared-prefix 2147483647",
            "shared prefix 2147483647: the context holds 512 tokens");
    refused("bench -m " + m + " --batch 1 -r 1 --steps 4096 --context 1048576",
            "a context of 1048576 tokens plus 4096 decode steps needs 1052672 positions");
    refused("load --url http://127.0.0.1:1 --rate 1e-12 --requests 3", "--rate 1e-12: requests per second, 0.001 to 1e+06");
    refused("load --url http://127.0.0.1:1 --rate 0.001 --requests 1000", "requests would take");
    // A timeout of inf or 1e300 s overflowed the client's microseconds and
    // read as "no connection"; a NaN temperature went out as JSON null,
    // which servers read as their default of 1.
    refused("load --url http://127.0.0.1:1 --rate 1 --requests 1 --timeout inf", "--timeout inf: seconds, 0.001 to 86400");
    refused("load --url http://127.0.0.1:1 --rate 1 --requests 1 --timeout 1e-9", "--timeout 1e-09: seconds, 0.001 to 86400");
    refused("load --url http://127.0.0.1:1 --rate 1 --requests 1 --temperature nan", "--temperature nan: a finite number >= 0");
    refused("load --url http://127.0.0.1:1 --rate 1 --requests 1 --temperature -1", "--temperature -1: a finite number >= 0");
    // A duration that holds more requests than a run sends was cut short
    // without a word; an endless one blamed --rate.
    refused("load --url http://127.0.0.1:1 --rate 100 --duration 2000",
            "--rate 100 for --duration 2000 s is about 200000 requests; a load test sends at most 100000");
    refused("load --url http://127.0.0.1:1 --rate 1 --duration nan", "--duration nan: seconds, a number > 0");
    refused("load --url http://127.0.0.1:1 --rate 1 --duration inf", "--duration inf: seconds, at most 86400 (a day)");
    refused("load --url http://127.0.0.1:1 --rate 1 --requests 1 --max-tokens 2000000000",
            "--max-tokens 2000000000: 1 to 1048576");
    // -1 bytes wrapped to "no limit" (a 50 MB body was then accepted).
    refused("serve -m " + m + " --port 0 --max-body -1", "--max-body: Value -1 not in range 1 to 1073741824");
    refused("serve -m " + m + " --port 0 --max-body 0", "--max-body: Value 0 not in range 1 to 1073741824");
    // "" listened on ::1 alone and said http://:8080; a context of 1 refused every request.
    refused("serve -m " + m + " --port 0 --host ''",
            "--host: give an address to listen on (127.0.0.1, ::1, or 0.0.0.0 for every one)");
    refused("serve -m " + m + " --port 0 --ctx 1",
            "--ctx 1: a prompt takes a position, leaving none for an answer; use 2 or more (0: the model's context)");
    refused("bench -m " + m + " -p 0 -n 0", "-p 0 and -n 0 leave nothing to measure");
    refused("bench -m " + m + " --hogs 3", "--hogs belongs to a contention run: add --contention");
    refused("bench -m " + m + " --steps 3", "--steps belongs to a batched run: add --batch SIZES");
    refused("bench -m " + m + " --batch 1 --contention", "--batch and --contention: choose one");
    // Writing a random model measures nothing unless -m names one: -p 8 -n 8 printed "wrote" and no figures.
    const std::string out = (scratch() / "never.gguf").string();
    refused("bench --random tiny --out '" + out + "' -p 8 -n 8 -r 1",
            "-p measures a model, and --random --out only writes one: add -m " + out + " to measure the file it writes");
    refused("bench --random tiny --out '" + out + "' --batch 1,2", "--batch measures a model");
    CHECK_FALSE(fs::exists(out));
    refused("bench -m " + m + " --type q8_0 -p 8 -n 0", "--type belongs to writing a random model: add --random PRESET");
    refused("queue -m " + m + " --samples 100000 --utilization 0.5 --context 1",
            "--context 1 and --samples 100000: the decode steps need 100002 positions");
    // --samples takes 2 at least: "use at most --samples 0" (or 1) named no fix.
    for (const char* context : {"512", "510"}) {
        const auto r = run_sixstep("queue -m " + m + " --samples 2 --context " + context + " --requests 1000", 20);
        CHECK(r.exit_code == 2);
        CHECK(contains(r.output, "more than the model's context of 512; use at most --context 509\n"));
    }
    refused("queue -m " + m + " --samples 10 --context 508 --requests 1000",
            "use at most --samples 3, or at most --context 501");
    refused("speculate -m " + m + " --draft " + m + " --k 2,2 --temp 0 -n 4 -r 1", "draft length 2 is given twice");
    refused("speculate -m " + m + " --draft " + m + " --k 1 --temp 0,0.5,0 -n 4 -r 1", "temperature 0 is given twice");
    refused("speculate -m " + m + " --draft " + m + " --draft " + m + " --k 1 --temp 0 -n 4 -r 1",
            "--draft " + model_file + " is given twice");
}

// Standard input that never ends: refused at a size, not read until memory
// runs out.
TEST_CASE("cli: tokenize - reads at most 64 MiB of standard input") {
    const auto r = run_command("timeout -s KILL 60 " + sixstep_cmd("tokenize -m '" + model_file + "' -") + " < /dev/zero");
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "standard input: more than 64 MiB of text"));
}

// Standard input that cannot be read (a folder, or closed) was taken for
// empty text: "1 tokens", exit 0.
TEST_CASE("cli: tokenize - says when standard input cannot be read") {
    const auto folder = run_command("timeout -s KILL 20 " + sixstep_cmd("tokenize -m '" + model_file + "' -") + " < " +
                                    std::string(SIXSTEP_SOURCE_DIR));
    CHECK(folder.exit_code == 2);
    CHECK(contains(folder.output, "standard input: cannot read it (Is a directory)"));
    const auto closed =
        run_command("timeout -s KILL 20 " + sixstep_cmd("tokenize -m '" + model_file + "' -") + " <&-");
    CHECK(closed.exit_code == 2);
    CHECK(contains(closed.output, "standard input: cannot read it"));
}

// Values inside the old ranges that ran for minutes or toward 8 GB, or
// printed a 10³⁰⁰-year bill; and an option of another mode, ignored.
TEST_CASE("cli: work and magnitudes past any use are refused before they run") {
    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    const int too_many = static_cast<int>(4 * cpus) + 1;
    refused("bench -m '" + model_file + "' --contention -n 1 --slices 1 -r 1 --hogs " + std::to_string(too_many),
            "--hogs " + std::to_string(too_many) + " is more than 4 a CPU");
    refused("queue --service-ms 2 --utilization 0.5 --requests 1000000000",
            "queue: 1000000000 requests is out of range (1000 … 10000000)");
    refused("bill --params 1e9 --train-tokens 1e6 --decode-tok-s 40 --load-s 1e308",
            "load time (s): must be from 0 to 1e+06, got 1e+308");
    refused("bill --params 1e9 --train-tokens 1e6 --decode-tok-s 1e-300", "decode rate (tokens/s): must be from 0.001");
    refused("canary --every-request", "--every-request belongs to a JSON run: add --json");
}

// Empty values that were taken as asking for nothing, or said with nothing
// between two spaces; and a mean of no answers printed as 0.0.
TEST_CASE("cli: empty values are named, and a version that answered nothing has no mean") {
    refused("generate -m '" + model_file + "' --prompt hi -n 1 --stop ''", "an empty stop string would stop nothing");
    const std::string out = (scratch() / "q.gguf").string();
    refused("quantize '" + model_file + "' '" + out + "' --type ''", "quantize: --type is empty (supported: q8_0, q4_0)");
    const auto canary = run_sixstep("canary --fraction 0", 20);
    CHECK(canary.exit_code == 0);
    CHECK(contains(canary.output, "served no request"));
    CHECK_FALSE(contains(canary.output, "mean 0.0 min"));
}
