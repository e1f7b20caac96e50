#include "s3/xml.h"

#include <gtest/gtest.h>

#include "util/markup.h"

namespace sx::s3::xml {
namespace {

TEST(Xml, ElementsAndText) {
  std::string doc = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><!-- <Key>no</Key> -->
  <Contents><Key>a &amp; b</Key><Size>3</Size></Contents>
  <Contents ><Key><![CDATA[<c>]]></Key><Size>4</Size></Contents>
  <KeyCount>2</KeyCount><Empty/></ListBucketResult>)";
  auto c = elements(doc, "Contents");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(text(c[0], "Key"), "a & b");
  EXPECT_EQ(text(c[1], "Key"), "<c>");
  EXPECT_EQ(text(doc, "KeyCount"), "2");  // not taken for <Key>
  EXPECT_EQ(text(doc, "Empty"), "");
  EXPECT_EQ(text(doc, "Missing"), std::nullopt);
}

TEST(Xml, NestedSameName) {
  auto e = elements("<a><a>x</a></a><a>y</a>", "a");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0], "<a>x</a>");
  EXPECT_EQ(e[1], "y");
}

TEST(Xml, Entities) {
  EXPECT_EQ(decode("&lt;&gt;&quot;&apos;&#65;&#x263a;&bogus;&"), "<>\"'A\xe2\x98\xba&bogus;&");
  EXPECT_EQ(escape_markup("<a&'\">"), "&lt;a&amp;&#39;&quot;&gt;");
  EXPECT_EQ(decode(escape_markup("x<&'>y")), "x<&'>y");
}

TEST(Xml, MalformedNeverCrashes) {
  for (std::string doc : {"<", "<a", "<a>", "<a>x</a", "<!--", "<![CDATA[", "<a/", "</a>", "<a><a>x</a>", "&#x110000;",
                          "&#;", "<a>&#99999999999;</a>"}) {
    elements(doc, "a");
    text(doc, "a");
    decode(doc);
  }
  EXPECT_TRUE(elements("<a>x</a", "a").empty());
}

}  // namespace
}  // namespace sx::s3::xml
