// The full-text tokenizer's pieces on facts of the reference: Porter2's
// (Snowball 3) stems, pylance 14's params JSON, the filter chain's order.
// tests/interop/test_fts_tokenizer.py compares whole texts with pylance.
#include <gtest/gtest.h>

#include "lance/full_text.h"
#include "lance/index/english_stemmer.h"
#include "lance/index/fts_tokenizer.h"

namespace lance {
namespace {

TEST(EnglishStemmerTest, Porter2Stems) {
  const std::pair<const char*, const char*> cases[] = {
      {"consign", "consign"},     {"consigned", "consign"},   {"consignment", "consign"},
      {"generously", "generous"}, {"generate", "generat"},    {"dying", "die"},
      {"skies", "sky"},           {"proceeded", "proceed"},   {"succeed", "succeed"},
      {"added", "add"},           {"hoped", "hope"},          {"hopping", "hop"},
      {"university", "universiti"},  {"internal", "internal"},   {"pasted", "paste"},
      {"meteorologist", "meteorolog"}, {"cries", "cri"},      {"ties", "tie"},
      {"gas", "gas"},             {"gaps", "gap"},            {"saying", "say"},
      {"inning", "inning"},       {"news", "news"},           {"by", "by"},
      {"yelled", "yell"},         {"caresses", "caress"},     {"knightly", "knight"},
      {"'tis", "tis"},            {"ladies'", "ladi"},        {"naïve", "naïv"}};
  for (const auto& [word, stem] : cases) EXPECT_EQ(index::StemEnglish(word), stem) << word;
}

TEST(FtsTokenizerTest, ParamsJsonAsPylanceWritesThem) {
  // metadata.lance's "params" of a default pylance 14 INVERTED index.
  const std::string json =
      R"({"lance_tokenizer":"text","base_tokenizer":"simple","language":"English","with_position":false,)"
      R"("max_token_length":40,"lower_case":true,"stem":true,"remove_stop_words":true,"custom_stop_words":null,)"
      R"("ascii_folding":true,"min_ngram_length":3,"max_ngram_length":3,"prefix_only":false,"block_size":128,)"
      R"("split_identifiers":false,"split_on_numerics":false,"preserve_original":false,"index_operators":false})";
  auto params = InvertedIndexParams::FromJson(json, "metadata.lance");
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->ToJson(), json);
  EXPECT_TRUE(params->CheckSupported("x").ok());

  auto unknown = InvertedIndexParams::FromJson(R"({"base_tokenizer":"simple","new_knob":1})", "f.lance");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("new_knob"), std::string::npos);
  EXPECT_FALSE(InvertedIndexParams::FromJson("[1]", "f.lance").ok());
  EXPECT_FALSE(InvertedIndexParams::FromJson(R"({"stem":"yes"})", "f.lance").ok());
}

TEST(FtsTokenizerTest, StopWordsAreCheckedAfterStemmingAndBeforeFolding) {
  InvertedIndexParams params;
  auto tokens = Tokenize("Having the Cafés running", params);
  ASSERT_TRUE(tokens.ok());
  // "having" stems to "have", a stop word; "cafés" folds after the check.
  ASSERT_EQ(tokens->size(), 2u);
  EXPECT_EQ((*tokens)[0].text, "cafe");
  EXPECT_EQ((*tokens)[0].position, 2u);
  EXPECT_EQ((*tokens)[1].text, "run");
  EXPECT_EQ((*tokens)[1].position, 3u);
}

TEST(FtsTokenizerTest, RefusesWhatItDoesNotImplement) {
  InvertedIndexParams params;
  params.language = "German";
  EXPECT_TRUE(Tokenize("x", params).status().IsNotImplemented());
  params.stem = false;
  params.custom_stop_words = std::vector<std::string>{"der"};
  EXPECT_TRUE(Tokenize("der x", params).ok());
  params = {};
  params.base_tokenizer = "icu";
  EXPECT_TRUE(Tokenize("x", params).status().IsNotImplemented());
  params = {};
  params.split_identifiers = true;
  EXPECT_TRUE(Tokenize("x", params).status().IsNotImplemented());
}

}  // namespace
}  // namespace lance
