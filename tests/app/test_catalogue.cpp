// The message catalogue (app/core/catalogue.h): exact entries, patterns and
// their holes, the words a language keeps, and text that must not make a
// lookup slow (the lesson's own words pass through it).
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <string_view>

#include "app/core/catalogue.h"
#include "pipeline/models.h"

using namespace sixstep;

TEST_CASE("catalogue: patterns fill their holes, and a hole is itself looked up") {
    CHECK(app::translate("en", "anything at all") == "anything at all");
    CHECK(app::translate("zh", "12.5") == "12.5");  // no letters: its own translation
    CHECK(app::translate("zh", "Timing") == "耗时");
    CHECK(app::translate("zh", "  Timing ") == "  耗时 ");
    CHECK(app::translate("zh", "certainly not in any catalogue") == std::nullopt);
    CHECK(app::translate("zh", "11 min") == "11 分钟");
    CHECK(app::translate("zh", "service time: 0.184 ms, the mean of 32 decode steps timed (c\u00b2\u00a0=\u00a00.032)") ==
          "服务时间：0.184 ms，实测 32 个解码步的平均值（c\u00b2\u00a0=\u00a00.032）");
    // A range with its unit and one without.
    CHECK(app::translate("zh", "distance = 45 is outside the training range 0.5–20 km: the model never saw such a "
                               "request, do not trust the answer") ==
          "距离 = 45 超出了训练范围 0.5–20 km：模型从没见过这样的请求，别相信这个回答");
    CHECK(app::translate("zh", "congestion = 1.5 is outside the training range 0–1: the model never saw such a "
                               "request, do not trust the answer") ==
          "拥堵 = 1.5 超出了训练范围 0–1：模型从没见过这样的请求，别相信这个回答");
    CHECK(app::translate("zh", "No knee: no points") == "没有膝点：没有数据点");  // a sentence's capital
    CHECK(app::translate("zh", "Knee at batch 16 (1602 tok/s): past it the slope falls to 3% of the rising slope; two "
                               "lines cut the squared error by 91%; 97% of the peak") ==
          "膝点在批大小 16（1602 词元/秒）：过了它，斜率降到上升段的 3%；两条直线把平方误差降低了 91%；达到峰值的 97%");
    // A refusal names its breakpoint and the peak's place: holes in holes.
    CHECK(app::translate("zh", "no knee: past batch 16 (1602 tok/s), the slope is 40% of the rising slope (a knee needs "
                               "≤ 25%); the breakpoint, batch 16 (1602 tok/s), reaches only 74% of the peak at batch "
                               "128 (a knee needs ≥ 85%)") ==
          "没有膝点：过了批大小 16（1602 词元/秒），斜率是上升段斜率的 40%（膝点要求 ≤ 25%）；分段点批大小 16（1602 "
          "词元/秒）只达到峰值的 74%（峰值在批大小 128；膝点要求 ≥ 85%）");
    CHECK(app::translate("zh", "step 8: done, 2 checks held") == "第 8 步：完成，2 项检查通过");
    // A count in 万 sits against the word after it; digits keep their space.
    CHECK(app::translate("zh", "3 requests") == "3 个请求");
    CHECK(app::translate("zh", "1万 requests") == "1万个请求");
    CHECK(app::translate("zh", "2.5亿 requests · 12 ms in all") == "2.5亿个请求 · 共 12 ms");
    // A hole is looked up in turn, through nested patterns: a sampler chain.
    CHECK(app::translate("zh", "softmax (2000) \u2192 greedy (1)") == "softmax (2000) \u2192 贪心（1）");
    // Notation and checksums are kept; a word the catalogue lacks is not.
    CHECK(app::translate("zh", "L0 H1 p99 ff5fe1dc27d634d9") == "L0 H1 p99 ff5fe1dc27d634d9");
    CHECK(app::translate("zh", "greedy zebra") == std::nullopt);
    // A backend's fallback note: the driver's own words kept.
    CHECK(app::translate("zh", "no CUDA device (cudaGetDeviceCount: no CUDA-capable device is detected); using the CPU") ==
          "没有可用的 CUDA 设备（cudaGetDeviceCount: no CUDA-capable device is detected）；改用 CPU");
    // Overlapped speculative decoding declined on a busy machine.
    CHECK(app::translate("zh", "no CPU free for the draft's thread (1 other runnable task on 2 CPUs): it took turns") ==
          "没有空闲的 CPU 给草稿模型的线程（另有 1 个可运行任务，共 2 个 CPU）：改为轮流运行");
}

// A serving lab's answer is sentences: each is looked up on its own, and the
// answer translates only when every one of them does.
TEST_CASE("catalogue: a lab's answer translates sentence by sentence") {
    CHECK(app::translate("zh", "The batch job got 4403 tokens/s.") == "批处理作业得到了 4403 词元/秒。");
    CHECK(app::translate("zh", "From 10% to 95% busy the mean wait grew 193\u00d7; at 90% a request waits 1.437 ms "
                               "for a 0.321 ms service. To wait no longer than one service, stay under 66% busy.") ==
          "利用率从 10% 升到 95%，平均等待增长了 193\u00d7；利用率 90% 时，一个请求要等 1.437 ms，而服务本身只要 "
          "0.321 ms。想让等待不超过一次服务的时间，利用率要保持在 66% 以下。");
    // The sentence after the first is a knee's verdict, itself a pattern.
    CHECK(app::translate("zh", "32 sequences per step gave 9.6\u00d7 the tokens/s of 1 while each token took 1.8\u00d7 "
                               "as long. knee: batch 16") ==
          "每步 32 个序列时，每秒词元数达到 9.6\u00d7（对比每步 1 个），每个词元的耗时变为 1.8\u00d7。膝点：批大小 16");
    CHECK(app::translate("zh", "The batch job got 4403 tokens/s. A zebra spoke.") == std::nullopt);
    // The speculative lab's longest answers: five sentences, the overlap
    // note and a verdict among them (they went untranslated on a busy
    // machine, where those are the sentences the answer grows).
    for (const char* verdict : {" A loss: a pass of this tiny target costs about as much as the draft's guesses it saves.",
                                " About the same: its middle timed rounds ran 0.93\u20131.06\u00d7, either side of 1\u00d7.",
                                " About the same: within 5% of 1\u00d7."}) {
        const std::string answer =
            std::string("The draft's guesses were accepted 90–91% of the time, so at best a pass of the target "
                        "produced 3.56 tokens on average. The greedy text was the target's own, token for token. The "
                        "best setting, k = 1, ran 0.97× the target alone on this machine, taking turns in 2 of 5 timed "
                        "runs: no CPU was free for the draft's thread.") + verdict;
        CAPTURE(answer);
        CHECK(app::translate("zh", answer).has_value());
    }
    // The real server's answer, with the sentence it grows when a busy
    // machine moved the server's pace (so a screen test sees it only now
    // and then).
    CHECK(app::translate("zh", "The server completed a request every 12.4 ms when saturated. At 5% of that capacity "
                               "(4.0 req/s) the 90th percentile TTFT was 8.2 ms; at 80% (64.5 req/s) it was 100.7 ms "
                               "\u2014 12.3\u00d7 \u2014 while the queue model predicted 53.2 ms. Throughput fell "
                               "behind the rate: 44.3 req/s served of 64.5 offered. At the highest rate the server took "
                               "21.9 ms a request, not 12.4: the load was 141% of what it could serve, not 80%.") ==
          "服务器饱和时每 12.4 ms 完成一个请求。在这个容量的 5%（4.0 请求/秒）时，TTFT 的第 90 百分位是 8.2 ms；在 80%"
          "（64.5 请求/秒）时是 100.7 ms\u2014\u201412.3\u00d7\u2014\u2014而排队模型预测的是 53.2 ms。吞吐量没跟上到达率："
          "只服务了 44.3 请求/秒，而到达的是 64.5 请求/秒。在最高到达率下，服务器每个请求用了 21.9 ms，而不是 12.4：负载是"
          "它能力的 141%，而不是 80%。");
    CHECK(app::translate("zh", "The server ran up to 2 requests at once, while the prediction is a single server's, "
                               "one at a time: read it as a rough guide.") ==
          "服务器最多同时运行 2 个请求，而预测按单服务台计算（一次一个）：只能当作粗略参考。");
    // A pattern that ends in a hole leaves the sentence's period to "{}.":
    // it was "膝点：批大小 16." (the hole took "16.").
    CHECK(app::translate("zh", "knee: batch 16.") == "膝点：批大小 16。");
    // The holes keep the English order (the count was where the share goes).
    CHECK(app::translate("zh", "The load (4.63 ms) is 20% of the cost of a single request (load + its compute) and "
                               "2.5e-05% of the cost of 1000000 requests served after one load (the largest count of "
                               "the load-once table).") ==
          "加载（4.63 ms）占单个请求成本（加载 + 它的计算）的 20%，占一次加载后所服务请求总成本的 2.5e-05%（共 "
          "1000000 个请求，一次加载表里最大的请求数）。");
    // A sentence must not swallow the next one into its last hole.
    CHECK(app::translate("zh", "Training this model took about 1.89×10¹³ FLOP; serving 10 requests a day of 200 tokens "
                               "costs 1.54×10¹⁰ FLOP a day, so after 365 days inference has cost 0.297× training; it "
                               "would catch up only on day 1229, beyond those 365 days. The load (1.5 ms) is 8.7% of "
                               "the cost of a single request (load + its compute) and 9.5e-06% of the cost of "
                               "1000000 requests served after one load (the largest count of the load-once table).") ==
          "训练这个模型用了约 1.89×10¹³ FLOP；每天服务 10 个请求、每个 200 个词元，每天要花 1.54×10¹⁰ FLOP，所以 365 天后推理"
          "只花了训练的 0.297×；要到第 1229 天才会追上训练，超出了这 365 天。加载（1.5 ms）占单个请求成本（加载 + 它的计算）的 8.7%，占一次加载后所服务请求总成本的 "
          "9.5e-06%（共 1000000 个请求，一次加载表里最大的请求数）。");
}

TEST_CASE("catalogue: hostile text is answered at once, untranslated") {
    // Nested general patterns on text a lesson could hold: bounded work.
    std::string nested;
    for (int i = 0; i < 300; ++i) nested += "greedy (1); softmax (2) \u2192 ";
    nested += "zebra";
    CHECK(app::translate("zh", nested) == std::nullopt);
    // Long text is the lesson's or the model's, never the catalogue's.
    CHECK(app::translate("zh", std::string(5000, 'a')) == std::nullopt);
    CHECK(app::translate("zh", std::string(5000, ' ')) == std::nullopt);
    CHECK(app::translate("zh", "") == "");
    CHECK(app::translate("zh", "   ") == "   ");
    CHECK(app::translate("zh", "{}") == "{}");
    CHECK(app::translate("zh", "step {}: done") == "第 {} 步：完成");
}

TEST_CASE("catalogue: every Chinese entry is Chinese, every pattern keeps its holes") {
    const app::Catalogue* zh = app::catalogue("zh");
    REQUIRE(zh != nullptr);
    std::set<std::string_view> keys;
    for (const auto& entry : zh->exact) {
        const auto& en = entry.first;
        const auto& tr = entry.second;
        CAPTURE(en);
        CHECK(keys.insert(en).second);  // no key twice
        CHECK(!tr.empty());
        // An entry with a hole among the exact ones is matched letter for
        // letter, "{}" included, so it never translates anything.
        CHECK(en.find("{}") == std::string_view::npos);
        CHECK(en.find("{=}") == std::string_view::npos);
    }
    auto holes = [](std::string_view s) {
        std::string h;
        for (size_t i = 0; (i = s.find('{', i)) != std::string_view::npos; ++i) h += s.substr(i, s[i + 1] == '=' ? 3 : 2);
        return h;
    };
    std::set<std::string_view> patterns;
    for (const auto& entry : zh->patterns) {
        const auto& en = entry.first;
        const auto& tr = entry.second;
        CAPTURE(en);
        CHECK(patterns.insert(en).second);  // a second one would never be reached
        CHECK(!holes(en).empty());
        CHECK(holes(en) == holes(tr));
    }
}


// A knob's name is shown wherever its request is: the knobs pane, the
// request as it arrives, the diagram's pill. Chinese screens name it too.
TEST_CASE("catalogue: every knob of every model kind has a Chinese name") {
    for (const std::string& kind : model_kinds())
        for (const Knob& k : model_description(kind).knobs) {
            CAPTURE(kind);
            CAPTURE(k.name);
            CHECK(app::translate("zh", k.name).has_value());
        }
}

// A Chinese narration's "out:" lines name each value by its path's key; an
// untranslated one showed as an identifier beside translated ones
// ("利用率列表 = …; ttft_p50_ms = …"). Only the ecosystem's own names stay.
TEST_CASE("catalogue: every path key of every model kind has a Chinese name, or is a name the ecosystem keeps") {
    for (const std::string& kind : model_kinds())
        for (const PathInfo& p : model_description(kind).paths) {
            const std::string key = p.path.substr(p.path.rfind('.') + 1);
            CAPTURE(p.path);
            const std::optional<std::string> zh = app::translate("zh", key);
            REQUIRE(zh.has_value());
            // Its own translation only where Chinese keeps it: n_layer, top_k, ms.
            if (*zh == key) CHECK(app::catalogue("zh")->keeps(key));
        }
}
