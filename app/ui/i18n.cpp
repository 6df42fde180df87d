#include "app/ui/i18n.h"

#include <array>
#include <cstring>
#include <utility>

namespace sixstep::ui {

namespace {
constexpr std::pair<const char*, const char*> zh[] = {
    {"request", "请求"},
    {"load", "加载"},
    {"forward", "前向"},
    {"output", "输出"},
    {"postprocess", "后处理"},
    {"respond", "返回"},
    {"Step", "步骤"},
    {"of", "/"},
    {"Inputs", "输入"},
    {"Outputs", "输出"},
    {"Arithmetic", "计算过程"},
    {"Warnings", "警告"},
    {"Timing", "耗时"},
    {"raw", "原始"},
    {"normalized", "归一化后"},
    {"Weights", "参数"},
    {"checksum", "校验和"},
    {"not run yet", "尚未运行"},
    {"next", "下一步"},
    {"Narration", "讲解"},
    {"Knobs", "旋钮"},
    {"Training", "训练"},
    {"Inspector", "检查器"},
    {"Answers so far", "已有的回答"},
    {"the request's data", "请求数据"},
    {"Loss", "损失"},
    {"Gradients", "梯度"},
    {"Parameters", "参数"},
    {"true value", "真实值"},
    {"frozen", "已冻结"},
    {"Served requests", "已服务的请求"},
    {"cold", "冷启动"},
    {"Log", "日志"},
    {"normalization", "归一化"},
    {"eval mode", "推理模式"},
    {"train mode", "训练模式"},
    {"minutes", "分钟"},
    {"Checks", "检查"},
    {"unit", "单位"},
    {"value", "数值"},
    {"field", "字段"},
    {"stage", "阶段"},
    {"Response", "响应"},
    {"loaded once, reused", "只加载一次，重复使用"},
    {"apply", "应用"},
    {"distance", "距离"},
    {"congestion", "拥堵"},
    {"express_lane", "快速通道"},
    {"normalize", "归一化"},
    {"mode", "模式"},
    {"cold start", "冷启动"},
    {"cold load", "冷加载"},
    {"reused", "复用"},
    {"1 · request: receive and normalize", "1 · 请求：接收并归一化"},
    {"2 · load the weights (once)", "2 · 加载参数（只加载一次）"},
    {"3 · forward pass only", "3 · 只做前向计算"},
    {"4 · raw output", "4 · 原始输出"},
    {"5 · postprocess", "5 · 后处理"},
    {"6 · respond", "6 · 返回"},
    {"The request as it arrives", "请求到达时的样子"},
    {"checks passed", "项检查通过"},
    {"normalization OFF", "未做归一化"},
};
}  // namespace

const char* tr(std::string_view lang, const char* en) {
    if (lang != "zh") return en;
    for (const auto& [e, z] : zh)
        if (std::strcmp(e, en) == 0) return z;
    return en;
}

std::string translated_text(std::string_view lang) {
    std::string out;
    if (lang == "zh")
        for (const auto& [e, z] : zh) out += z;
    return out;
}

}  // namespace sixstep::ui
