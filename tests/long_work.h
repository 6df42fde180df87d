// A lesson whose step 2 trains for minutes, for tests that interrupt long
// work: a million full-batch steps over the bundled deliveries repeated 500
// times (one step then takes milliseconds). Step 1 trains two steps.
#pragma once
#include <fstream>
#include <string>

#include "temp_dir.h"

namespace sixstep::test {

inline std::string long_training_lesson(const std::string& folder) {
    const auto dir = process_temp_dir(folder);
    std::ifstream in(std::string(SIXSTEP_SOURCE_DIR) + "/assets/data/deliveries.csv");
    std::string header, line, rows;
    std::getline(in, header);
    while (std::getline(in, line)) rows += line + "\n";
    const auto data = dir / "long-training.csv";
    {
        std::ofstream out(data);
        out << header << "\n";
        for (int i = 0; i < 500; ++i) out << rows;
    }
    const auto lesson = dir / "long-training.yaml";
    std::ofstream(lesson) << "title: Long training\nbudget: {train_steps: 2000000}\nsteps:\n"
                             "  - title: Two steps\n"
                             "    train: {steps: 2, from: zero, learning_rate: 0.005, data: \""
                          << data.string() << "\"}\n"
                             "  - title: A million more\n"
                             "    train: 1000000\n";
    return lesson.string();
}

}  // namespace sixstep::test
