// `sixstep bench --batch` and `sixstep queue` as a user runs them: the JSON
// they print (its structure and the arithmetic that ties it together, never
// speed), their tables, and one clear error with exit code 2 for bad input.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "run_command.h"
#include "temp_dir.h"

using sixstep::test::run_command;
using sixstep::test::sixstep_cmd;
using Json = nlohmann::json;

namespace serving_cli_test {

namespace {

std::string tiny_model() {
    const auto path = sixstep::test::process_temp_dir("serving-cli") / "tiny.gguf";
    if (!std::filesystem::exists(path)) {
        const auto w = run_command(sixstep_cmd("bench --random tiny --type f32 --out '" + path.string() + "'"));
        REQUIRE(w.exit_code == 0);
    }
    return path.string();
}

// Runs sixstep and parses its stdout as JSON (stderr is separate here: a
// progress line must never spoil the JSON).
Json run_json(const std::string& args) {
    const auto r = run_command(sixstep_cmd(args) + " 2>/dev/null");
    INFO(args << "\n" << r.output);
    REQUIRE(r.exit_code == 0);
    return Json::parse(r.output);
}

}  // namespace

TEST_CASE("cli bench --batch: every figure in the JSON") {
    const std::string m = tiny_model();
    const Json j = run_json("bench --batch 1,2,4,8,16 -m '" + m + "' --context 8 --steps 2 -r 1 -t 2 --json");
    CHECK(j["n_context"] == 8);
    CHECK(j["n_steps"] == 2);
    CHECK(j["repetitions"] == 1);
    CHECK(j["threads"] == 2);
    CHECK(j["mean_context"] == 9.5);
    CHECK(j["load_average_before"].is_number());
    CHECK(j["machine"]["read_bytes_per_s"].get<double>() > 0);
    CHECK(j["machine"]["flops_per_s"].get<double>() > 0);
    CHECK(j["machine"]["method"].get<std::string>().find("best of") != std::string::npos);
    REQUIRE(j["points"].size() == 5);
    const double weights = j["weight_bytes_per_step"].get<double>();
    const double kv_pos = j["kv_bytes_per_position"].get<double>();
    for (const Json& p : j["points"]) {
        const int b = p["batch"];
        CHECK(p["tokens_per_s"].get<double>() == doctest::Approx(b * 1000.0 / p["step_ms"].get<double>()));
        CHECK(p["tpot_ms"] == p["step_ms"]);
        CHECK(p["weight_bytes"].get<double>() == weights);
        CHECK(p["kv_bytes"].get<double>() == b * 9.5 * kv_pos);
        CHECK(p["kv_to_weight_ratio"].get<double>() == doctest::Approx(b * 9.5 * kv_pos / weights));
        const Json& rl = p["roofline"];
        CHECK(rl["predicted_ms"].get<double>() ==
              std::max(rl["memory_ms"].get<double>(), rl["compute_ms"].get<double>()));
        CHECK((rl["bound"] == "memory" || rl["bound"] == "compute"));
    }
    const Json& k = j["knee"];
    CHECK(k["found"].is_boolean());
    CHECK(k["verdict"].is_string());
    CHECK(k["method"].get<std::string>().find("GuideLLM") != std::string::npos);
    CHECK(k["rising"]["slope"].is_number());
    CHECK(k.contains("batch") == k["found"].get<bool>());
}

TEST_CASE("cli bench --batch: the table names the knee method and the roofs") {
    const std::string m = tiny_model();
    const auto r = run_command(sixstep_cmd("bench --batch 1,2 -m '" + m + "' --context 4 --steps 1 -r 1 -t 1"));
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("| batch | TPOT ms | tokens/s |") != std::string::npos);
    CHECK(r.output.find("roofs: read bandwidth") != std::string::npos);
    CHECK(r.output.find("no knee claimed: too few points (2;") != std::string::npos);
    CHECK(r.output.find("knee method:") != std::string::npos);
    CHECK(r.output.find("load average") != std::string::npos);
}

TEST_CASE("cli bench --batch: bad input, one message, exit 2") {
    const std::string m = tiny_model();
    const auto bad = [&](const std::string& args, const std::string& message) {
        const auto r = run_command(sixstep_cmd("bench -m '" + m + "' " + args));
        INFO(args << "\n" << r.output);
        CHECK(r.exit_code == 2);
        CHECK(r.output.find(message) != std::string::npos);
    };
    bad("--batch 0", "batch size 0 is out of range (1 … 4096)");
    bad("--batch 1,2,2", "batch size 2 is given twice");
    bad("--batch 1,x", "--batch");
    bad("--batch 1 --context 300", "needs 332 positions, more than the model's context of 256 (n_ctx)");
    bad("--batch 1 --steps 0", "--steps");
}

TEST_CASE("cli queue: simulation beside the formulas, as JSON") {
    const Json j = run_json("queue --service-ms 10 --utilization 0.5,0.9 --requests 20000 --seed 5 --json");
    CHECK(j["service"]["mean_ms"] == 10);
    CHECK(j["service"]["source"] == "given (--service-ms)");
    REQUIRE(j["points"].size() == 2);
    const Json& p = j["points"][0];
    CHECK(p["utilization"] == 0.5);
    CHECK(p["arrival_rate_per_s"] == 50);
    CHECK(p["md1"]["formula_ms"] == 5);
    CHECK(p["mm1"]["formula_ms"] == 10);
    CHECK(p["md1"]["queue"] == "M/D/1");
    CHECK(p["mm1"]["ci95_ms"].get<double>() > 0);
    CHECK(p["mm1"]["n_measured"].get<long long>() >= 20000);
    CHECK_FALSE(p.contains("mg1"));
    CHECK(j["formula"].size() == 99);
    REQUIRE(j["headroom"].size() == 5);
    CHECK(j["headroom"][1]["max_utilization_mm1"] == 0.5);
}

TEST_CASE("cli queue: a service time measured on a model") {
    const std::string m = tiny_model();
    const Json j = run_json("queue -m '" + m + "' --samples 20 --context 8 -t 1 --utilization 0.5 --requests 5000 --json");
    CHECK(j["service"]["n_samples"] == 20);
    CHECK(j["service"]["samples_ms"].size() == 20);
    CHECK(j["service"]["source"].get<std::string>().find("measured: 20 decode steps of batch 1") == 0);
    REQUIRE(j["points"].size() == 1);
    CHECK(j["points"][0].contains("mg1"));
    CHECK(j["headroom"][0].contains("max_utilization_mg1"));
}

TEST_CASE("cli queue: a table, and the headroom") {
    const auto r = run_command(sixstep_cmd("queue --service-ms 4 --utilization 0.3,0.6 --requests 5000"));
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("| utilization | arrivals/s | M/D/1 sim | M/D/1 formula |") != std::string::npos);
    CHECK(r.output.find("keep headroom") != std::string::npos);
    CHECK(r.output.find("| 1 × service (4 ms) | 67 % | 50 % |") != std::string::npos);
}

// A service of 10⁹ ms at 50 % busy: 5×10⁻⁷ arrivals a second, printed "0.0".
TEST_CASE("cli queue: a rate too small for one decimal keeps its digits") {
    const auto r = run_command(sixstep_cmd("queue --service-ms 1e9 --utilization 0.5 --requests 1000"));
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("| 50 % | 5×10⁻⁷ |") != std::string::npos);
}

// 0.1 % and 98.5 % busy were labelled "0 %" and "98 %" (and 99.9 %
// "100 %", where a queue has no steady state), and a wait of 0.0005
// services "0.00".
TEST_CASE("cli queue: utilizations near 0 and 1 keep their digits") {
    const auto r = run_command(sixstep_cmd("queue --service-ms 5 --utilization 0.001,0.985 --requests 2000"));
    CAPTURE(r.output);
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("\n| 0.1 % | 0.2 | ") != std::string::npos);
    CHECK(r.output.find("\n| 98.5 % | 197.0 | ") != std::string::npos);
    CHECK(r.output.find(" | 0.000501, 0.001 | ") != std::string::npos);
}

TEST_CASE("cli queue: bad input, one message, exit 2, and no hang at utilization 1") {
    const auto bad = [](const std::string& args, const std::string& message) {
        const auto r = run_command(sixstep_cmd("queue " + args));
        INFO(args << "\n" << r.output);
        CHECK(r.exit_code == 2);
        CHECK(r.output.find(message) != std::string::npos);
        CHECK(r.output.find("sixstep: error:") == r.output.rfind("sixstep: error:"));  // one message
    };
    bad("--service-ms 10 --utilization 1", "grows without bound");
    bad("--service-ms 10 --utilization 0.5,1.2", "utilization 1.2 is not below 1");
    bad("--service-ms 10 --utilization 0", "utilization 0 is not above 0");
    bad("--service-ms 10 --utilization -0.5", "utilization -0.5 is not above 0");
    bad("--service-ms 10 --utilization nan", "utilization must be a finite number, not nan");
    bad("--service-ms 0", "the service time must be a positive number of ms, not 0");
    bad("--service-ms -2", "the service time must be a positive number of ms, not -2");
    bad("--service-ms inf", "the service time must be a positive number of ms, not inf");
    bad("--service-ms 10 --requests 10", "10 requests is out of range (1000 … 10000000)");
    bad("--service-ms 10 --requests 99999999999", "99999999999 requests is out of range");
    bad("--service-ms 10 --utilization x", "--utilization");
    bad("", "queue needs a service time: --service-ms X, or --model F.gguf to measure one");
    bad("--service-ms 5 -m '" + tiny_model() + "'", "give either --service-ms or --model, not both");
    bad("-m '" + tiny_model() + "' --utilization 1", "grows without bound");
    // A row per utilization: the same one twice ran it twice.
    bad("--service-ms 10 --utilization 0.5 --utilization 0.5", "queue: utilization 0.5 is given twice");
    bad("--service-ms 10 --utilization 0.3,0.5,0.3", "queue: utilization 0.3 is given twice");
    // The measurement's options with a given service time measured nothing, silently.
    bad("--service-ms 10 --batch 4", "--batch belongs to a measured service time (--model F.gguf)");
    bad("--service-ms 10 --samples 3", "--samples belongs to a measured service time");
    bad("--service-ms 10 -t 2", "--threads belongs to a measured service time");
    bad("--service-ms 10 --context 64", "--context belongs to a measured service time");
}

}  // namespace serving_cli_test
