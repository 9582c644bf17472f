// The job's TCP store (src/dist/store.h): values, counters, waits and their timeouts, and the
// ranks whose connection closed without a goodbye.
#include "dist/store.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>

namespace wf::dist {
namespace {

std::unique_ptr<TcpStore> makeStore(bool server, int port, int rank, std::chrono::milliseconds timeout) {
  TcpStore::Options o;
  o.port = port;
  o.isServer = server;
  o.rank = rank;
  o.timeout = timeout;
  auto s = TcpStore::create(o);
  EXPECT_TRUE(s) << s.status().toString();
  return s ? std::move(*s) : nullptr;
}

std::vector<uint8_t> bytes(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

TEST(TcpStore, SetGetAddCheck) {
  auto server = makeStore(true, 0, 0, std::chrono::seconds(10));
  ASSERT_TRUE(server);
  auto client = makeStore(false, server->port(), 1, std::chrono::seconds(10));
  ASSERT_TRUE(client);
  ASSERT_TRUE(server->set("a", bytes("hello")).isOk());
  auto a = client->get("a");
  ASSERT_TRUE(a) << a.status().toString();
  EXPECT_EQ(*a, bytes("hello"));
  // A binary value with NULs and every byte survives.
  std::vector<uint8_t> all(256);
  for (int i = 0; i < 256; ++i) all[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
  ASSERT_TRUE(client->set("bin", all).isOk());
  EXPECT_EQ(*server->get("bin"), all);
  EXPECT_EQ(*client->add("n", 5), 5);
  EXPECT_EQ(*server->add("n", -2), 3);
  EXPECT_EQ(*client->add("n", 0), 3);
  EXPECT_TRUE(*client->check({"a", "n"}));
  EXPECT_FALSE(*client->check({"a", "missing"}));
}

TEST(TcpStore, GetWaitsForAnotherClientsSet) {
  auto server = makeStore(true, 0, 0, std::chrono::seconds(10));
  ASSERT_TRUE(server);
  const int port = server->port();
  std::thread writer([port] {
    auto c = makeStore(false, port, 1, std::chrono::seconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ASSERT_TRUE(c->set("late", bytes("value")).isOk());
  });
  auto start = std::chrono::steady_clock::now();
  auto v = server->get("late");
  writer.join();
  ASSERT_TRUE(v) << v.status().toString();
  EXPECT_EQ(*v, bytes("value"));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(150));
  EXPECT_TRUE(server->wait({"late"}, std::chrono::seconds(1)).isOk());
}

TEST(TcpStore, WaitsTimeOutWithAnErrorNamingTheKey) {
  auto server = makeStore(true, 0, 0, std::chrono::milliseconds(300));
  ASSERT_TRUE(server);
  auto start = std::chrono::steady_clock::now();
  auto v = server->get("never");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(v.status().message().find("'never'"), std::string::npos) << v.status().message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  Status w = server->wait({"x", "y"}, std::chrono::milliseconds(100));
  EXPECT_FALSE(w.isOk());
  // The connection stays usable after a timeout.
  ASSERT_TRUE(server->set("x", bytes("1")).isOk());
  EXPECT_EQ(*server->get("x"), bytes("1"));
}

// A client that says hello as rank `rank` over a raw socket and then vanishes without a goodbye,
// as a killed process does.
void helloAndVanish(int port, int rank) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  // command 6 (hello), empty key, empty value, number = rank; little-endian.
  std::vector<uint8_t> request = {6, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 8; ++i) request.push_back(static_cast<uint8_t>(static_cast<uint64_t>(rank) >> (8 * i)));
  ASSERT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  uint8_t reply[13];
  ASSERT_EQ(::recv(fd, reply, sizeof(reply), MSG_WAITALL), 13);
  ::close(fd);
}

TEST(TcpStore, NamesRanksWhoseConnectionClosedWithoutGoodbye) {
  auto server = makeStore(true, 0, 0, std::chrono::seconds(5));
  ASSERT_TRUE(server);
  {
    auto polite = makeStore(false, server->port(), 1, std::chrono::seconds(5));
    ASSERT_TRUE(polite);
  }  // says goodbye
  helloAndVanish(server->port(), 3);
  std::vector<int> dead;
  for (int i = 0; i < 100 && dead.empty(); ++i) {
    auto d = server->deadRanks();
    ASSERT_TRUE(d) << d.status().toString();
    dead = *d;
    if (dead.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(dead, std::vector<int>({3}));
}

TEST(TcpStore, ClientGivesUpConnectingAfterTheTimeout) {
  // Nobody serves this port: bind one, then close it, so it is (almost surely) free.
  auto probe = makeStore(true, 0, -1, std::chrono::seconds(1));
  const int port = probe->port();
  probe.reset();
  TcpStore::Options o;
  o.port = port;
  o.timeout = std::chrono::milliseconds(300);
  auto s = TcpStore::create(o);
  ASSERT_FALSE(s);
  EXPECT_NE(s.status().message().find("MASTER_ADDR:MASTER_PORT"), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace wf::dist
