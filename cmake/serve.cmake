# `warpforge serve` (src/serve): the KServe v2 HTTP server. HTTP is Boost.Beast over Boost.Asio
# (header-only, Debian libboost-dev); metrics are kept and rendered by prometheus-cpp's core
# library (Debian prometheus-cpp-dev). Included from the top-level CMakeLists.txt after the
# `warpforge` executable is defined.
find_package(Boost 1.74 REQUIRED)
find_package(prometheus-cpp CONFIG REQUIRED COMPONENTS core)

file(GLOB WF_SERVE_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/serve/*.cpp)
add_library(warpforge_serve STATIC ${WF_SERVE_SOURCES})
target_include_directories(warpforge_serve PUBLIC ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(warpforge_serve PUBLIC wf_runtime PRIVATE Boost::headers prometheus-cpp::core Threads::Threads)
# One strand per connection; Asio's own threads are ours (std::jthread), no Boost.Thread.
target_compile_definitions(warpforge_serve PRIVATE BOOST_ASIO_NO_DEPRECATED BOOST_BEAST_USE_STD_STRING_VIEW)
target_link_libraries(warpforge PRIVATE warpforge_serve)
