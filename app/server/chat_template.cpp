#include "app/server/chat_template.h"

namespace sixstep::server {

std::string apply_plain_chat_template(const std::vector<ChatMessage>& messages) {
    std::string text;
    for (const ChatMessage& m : messages)
        if (m.role == "system" || m.role == "developer") text += m.content + "\n\n";
    for (const ChatMessage& m : messages) {
        if (m.role == "user") text += "User: " + m.content + "\n";
        else if (m.role == "assistant") text += "Assistant: " + m.content + "\n";
    }
    return text + "Assistant:";
}

}  // namespace sixstep::server
