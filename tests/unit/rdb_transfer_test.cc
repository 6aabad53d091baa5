#include "common/rdb_transfer.h"

#include <gtest/gtest.h>

#include <string>

namespace shardctl::common {
namespace {

const std::string kMark(40, 'm');
const std::string kReply = "+FULLRESYNC 0123456789012345678901234567890123456789 1234\r\n";

// Feeds `stream` in chunks of `chunk` bytes and returns the payload handed out.
std::string FeedInChunks(RdbTransferReader& reader, const std::string& stream, size_t chunk) {
  std::string payload;
  for (size_t at = 0; at < stream.size(); at += chunk) {
    auto part = reader.Feed(std::string_view(stream).substr(at, chunk));
    EXPECT_TRUE(part.ok()) << (part.ok() ? "" : part.error().message());
    if (!part.ok()) break;
    payload += *part;
  }
  return payload;
}

TEST(RdbTransferTest, DiskBasedPayloadAtEveryChunkSize) {
  const std::string rdb = "REDIS0010" + std::string(300, 'x') + "\xff" + "12345678";
  const std::string stream = "\n\n" + kReply + "\n\n$" + std::to_string(rdb.size()) + "\r\n" + rdb +
                             "*1\r\n$4\r\nPING\r\n";
  for (size_t chunk = 1; chunk <= stream.size(); ++chunk) {
    RdbTransferReader reader;
    EXPECT_EQ(FeedInChunks(reader, stream, chunk), rdb) << "chunk " << chunk;
    EXPECT_TRUE(reader.done());
    EXPECT_EQ(reader.replication_offset(), 1234);
    EXPECT_EQ(reader.replication_id(), "0123456789012345678901234567890123456789");
    EXPECT_EQ(reader.announced_length(), static_cast<int64_t>(rdb.size()));
    EXPECT_EQ(reader.Remaining(), "*1\r\n$4\r\nPING\r\n");
  }
}

TEST(RdbTransferTest, DisklessPayloadEndsAtTheMark) {
  // The payload itself contains the mark's first bytes: only the whole mark at the end counts.
  const std::string rdb = "VALKEY080" + std::string(39, 'm') + "payload" + "\xff";
  const std::string stream = kReply + "$EOF:" + kMark + "\r\n" + rdb + kMark;
  for (size_t chunk = 1; chunk <= stream.size(); ++chunk) {
    RdbTransferReader reader;
    EXPECT_EQ(FeedInChunks(reader, stream, chunk), rdb) << "chunk " << chunk;
    EXPECT_TRUE(reader.done()) << "chunk " << chunk;
    EXPECT_EQ(reader.payload_bytes(), rdb.size());
    EXPECT_EQ(reader.announced_length(), static_cast<int64_t>(rdb.size()));
  }
}

TEST(RdbTransferTest, NotDoneUntilTheWholePayloadArrived) {
  RdbTransferReader reader;
  auto part = reader.Feed(kReply + "$10\r\n12345");
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(*part, "12345");
  EXPECT_FALSE(reader.done());
  EXPECT_EQ(reader.stage(), RdbTransferReader::Stage::kPayload);
}

TEST(RdbTransferTest, AnErrorReplyIsReportedAndSticky) {
  RdbTransferReader reader;
  auto refused = reader.Feed("-NOAUTH Authentication required.\r\n");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(),
            "the primary refused the snapshot: NOAUTH Authentication required.");
  EXPECT_FALSE(reader.Feed("$3\r\nabc").ok());
}

TEST(RdbTransferTest, BadHeadersAreErrors) {
  for (const std::string header : {"$-5\r\n", "$abc\r\n", "*3\r\n", "$EOF:short\r\n"}) {
    RdbTransferReader reader;
    EXPECT_FALSE(reader.Feed(kReply + header).ok()) << header;
  }
  RdbTransferReader no_offset;
  EXPECT_FALSE(no_offset.Feed("+FULLRESYNC abc\r\n").ok());
  RdbTransferReader endless;
  EXPECT_FALSE(endless.Feed(std::string(2000, 'z')).ok());
}

}  // namespace
}  // namespace shardctl::common
