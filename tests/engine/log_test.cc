// The logger: levels, the environment variable's parsing, and the sink.
#include "recq/log.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace recq {
namespace {

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = CurrentLogLevel();
    SetLogSink([this](LogLevel level, absl::string_view message) {
      seen_.emplace_back(level, std::string(message));
    });
  }
  void TearDown() override {
    SetLogSink(nullptr);
    SetLogLevel(saved_);
  }
  LogLevel saved_ = LogLevel::kWarning;
  std::vector<std::pair<LogLevel, std::string>> seen_;
};

TEST_F(LogTest, WritesOnlyAtOrAboveTheLevel) {
  SetLogLevel(LogLevel::kWarning);
  Log(LogLevel::kError, "e");
  Log(LogLevel::kWarning, "w");
  Log(LogLevel::kInfo, "i");
  Log(LogLevel::kDebug, "d");
  ASSERT_EQ(seen_.size(), 2u);
  EXPECT_EQ(seen_[0], std::make_pair(LogLevel::kError, std::string("e")));
  EXPECT_EQ(seen_[1], std::make_pair(LogLevel::kWarning, std::string("w")));
  EXPECT_TRUE(LogEnabled(LogLevel::kWarning));
  EXPECT_FALSE(LogEnabled(LogLevel::kInfo));
}

TEST_F(LogTest, OffSilencesEverything) {
  SetLogLevel(LogLevel::kOff);
  Log(LogLevel::kError, "e");
  EXPECT_TRUE(seen_.empty());
  EXPECT_FALSE(LogEnabled(LogLevel::kError));
}

TEST_F(LogTest, DebugShowsEverything) {
  SetLogLevel(LogLevel::kDebug);
  Log(LogLevel::kDebug, "d");
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0].second, "d");
}

TEST(ParseLogLevelTest, AcceptsNamesAndDigits) {
  LogLevel level = LogLevel::kError;
  EXPECT_TRUE(ParseLogLevel("INFO", &level));
  EXPECT_EQ(level, LogLevel::kInfo);
  EXPECT_TRUE(ParseLogLevel(" warn ", &level));
  EXPECT_EQ(level, LogLevel::kWarning);
  EXPECT_TRUE(ParseLogLevel("3", &level));
  EXPECT_EQ(level, LogLevel::kDebug);
  EXPECT_TRUE(ParseLogLevel("off", &level));
  EXPECT_EQ(level, LogLevel::kOff);
  EXPECT_FALSE(ParseLogLevel("loud", &level));
  EXPECT_FALSE(ParseLogLevel("7", &level));
  EXPECT_EQ(level, LogLevel::kOff);  // unchanged on failure
}

}  // namespace
}  // namespace recq
