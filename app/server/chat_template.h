// The chat template: how a list of chat messages becomes one prompt text.
// The bundled story model was never trained on a chat format, so it gets a
// plain one that any base model continues sensibly:
//
//     <system content>            (each system or developer message, then a blank line)
//
//     User: <content>
//     Assistant: <content>
//     User: <content>
//     Assistant:                  (the model writes from here)
#pragma once
#include <string>
#include <vector>

namespace sixstep::server {

struct ChatMessage {
    std::string role;     // "system", "developer", "user" or "assistant"
    std::string content;  // plain text
};

std::string apply_plain_chat_template(const std::vector<ChatMessage>& messages);

}  // namespace sixstep::server
