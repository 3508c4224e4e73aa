// pp-layout=: Megatron-Core's pipeline layout strings ("Et*3|(tt|)*29|mL"), read as
// PipelineParallelLayerLayout.parse_str_to_list reads them: repeats unrolled, then virtual stages
// split at '|'.
#include <fmt/format.h>

#include <charconv>

#include "stepcast/plan/layer_map.hpp"

namespace stepcast::plan {
namespace {

// Repeats past this make no model (a layout names each of a model's few hundred layers once).
constexpr int kMostRepeats = 100000;

/// Reads a sequence of layer letters, '|' and parenthesised groups, each optionally repeated
/// (X*n), into its unrolled text; stops at ')' or the end.
class Unroller {
 public:
  explicit Unroller(std::string_view text) : text_(text) {}

  bool sequence(std::string& out, int depth) {
    while (pos_ < text_.size() && text_[pos_] != ')') {
      if (text_[pos_] == ',') {  // cosmetic in Megatron-Core's syntax
        ++pos_;
        continue;
      }
      std::string item;
      if (!atom(item, depth)) return false;
      int times = 1;
      if (pos_ < text_.size() && text_[pos_] == '*' && !count(times)) return false;
      if (out.size() + item.size() * static_cast<std::size_t>(times) > kMostRepeats) {
        why_ = fmt::format("it unrolls to more than {} letters", kMostRepeats);
        return false;
      }
      for (int i = 0; i < times; ++i) out += item;
    }
    return true;
  }

  [[nodiscard]] bool at_end() const { return pos_ == text_.size(); }
  [[nodiscard]] std::size_t position() const { return pos_; }
  [[nodiscard]] const std::string& why() const { return why_; }

 private:
  bool atom(std::string& item, int depth) {
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      if (!sequence(item, depth + 1)) return false;
      if (pos_ >= text_.size()) {
        why_ = "a '(' is not closed";
        return false;
      }
      ++pos_;  // ')'
      return true;
    }
    if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
      item = std::string(1, c);
      ++pos_;
      return true;
    }
    why_ = fmt::format(
        "'{}' at position {} is not a layer (E embedding, t transformer layer, m MTP module, L loss), "
        "'|', '(', ')' or '*n'",
        c, pos_ + 1);
    return false;
  }

  bool count(int& times) {
    ++pos_;  // '*'
    const char* begin = text_.data() + pos_;
    const char* end = text_.data() + text_.size();
    const auto [stop, ec] = std::from_chars(begin, end, times);
    if (ec != std::errc() || times < 1) {
      why_ = fmt::format("'*' at position {} needs a whole number >= 1 after it", pos_);
      return false;
    }
    pos_ += static_cast<std::size_t>(stop - begin);
    return true;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::string why_;
};

}  // namespace

std::optional<std::vector<ChunkContent>> parse_pp_layout(std::string_view text, std::string& why) {
  Unroller reader(text);
  std::string flat;
  if (!reader.sequence(flat, 0)) {
    why = reader.why();
    return std::nullopt;
  }
  if (!reader.at_end()) {
    why = fmt::format("the ')' at position {} closes no '('", reader.position() + 1);
    return std::nullopt;
  }
  std::vector<ChunkContent> stages(1);
  int embeddings = 0;
  int losses = 0;
  for (const char c : flat) {
    ChunkContent& st = stages.back();
    switch (c) {
      case '|':
        stages.emplace_back();
        break;
      case 'E':
        st.embedding = true;
        ++embeddings;
        break;
      case 't':
        ++st.decoders;
        break;
      case 'm':
        ++st.mtp;
        break;
      default:  // 'L'
        st.loss = true;
        ++losses;
        break;
    }
  }
  // Megatron-Core's validate_layer_layout: one embedding; stepcast models one loss stage.
  if (embeddings != 1 || losses != 1) {
    why = fmt::format("it names the embedding (E) {} times and the loss (L) {} times; each must appear once",
                      embeddings, losses);
    return std::nullopt;
  }
  return stages;
}

}  // namespace stepcast::plan
